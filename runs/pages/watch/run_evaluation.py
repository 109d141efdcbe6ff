"""The run page's evaluation panel: its starting data (being built)."""


def evaluation_page_data(run) -> dict:
    return {}
