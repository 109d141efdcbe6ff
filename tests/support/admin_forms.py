"""What an admin change or add page would POST back as it stands: each form's values, as a
browser sends them, so that a test changes only what it means to (a crafted POST)."""

UNCHECKED = object()


def _value(bound):
    value = bound.field.prepare_value(bound.value())
    if isinstance(value, bool):
        return "on" if value else UNCHECKED  # a browser leaves an unticked box out
    if isinstance(value, (list, tuple)):
        return ["" if v is None else v for v in value]
    return "" if value is None else value


def _fields(form) -> dict:
    return {form.add_prefix(name): _value(form[name]) for name in form.fields}


def posted_as_shown(response) -> dict:
    """The POST body of the admin page in `response` (a Django test client GET of it)."""
    data = _fields(response.context["adminform"].form)
    for inline in response.context["inline_admin_formsets"]:
        data.update(_fields(inline.formset.management_form))
        for each in inline.formset.forms:
            data.update(_fields(each))
    return {key: value for key, value in data.items() if value is not UNCHECKED}
