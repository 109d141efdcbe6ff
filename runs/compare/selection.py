"""Which runs a comparison is about: the `runs` parameter, parsed the same way for the API
and the page, with a message that names what is wrong."""
from runs.web.record_ids import whole_number

MIN_RUNS = 2
MAX_RUNS = 8


class BadSelection(ValueError):
    pass


def parse_run_ids(text: str) -> list[int]:
    """"3, 5,7" → [3, 5, 7]; repeats count once; 2 to 8 runs."""
    ids: list[int] = []
    for part in (piece.strip() for piece in text.split(",")):
        if not part:
            continue
        run_id = whole_number(part)
        if run_id is None:
            raise BadSelection(f"{part!r} is not a run id (run ids are whole numbers, separated by commas)")
        if run_id not in ids:
            ids.append(run_id)
    if len(ids) < MIN_RUNS:
        raise BadSelection(f"pick at least {MIN_RUNS} different runs to compare, got {len(ids)}")
    if len(ids) > MAX_RUNS:
        raise BadSelection(f"at most {MAX_RUNS} runs can be compared at once, got {len(ids)}")
    return ids


def missing_runs(wanted: list[int], found) -> list[int]:
    return [run_id for run_id in wanted if run_id not in set(found)]
