"""The run page's alarms panel: its starting data (being built)."""


def alarm_page_data(run) -> dict:
    return {}
