"""Training configs: knobs by name, from a preset or the defaults."""
from typing import Any

from client.session import Json, Session


class ConfigCalls(Session):
    def configs(self, page: int = 1) -> Json:
        return self._call("GET", "configs/", params={"page": page})

    def config(self, config_id: int) -> Json:
        return self._call("GET", f"configs/{config_id}/")

    def create_config(self, name: str, values: dict[str, Any] | None = None, preset: str | None = None,
                      description: str = "") -> Json:
        """`preset` first (config_presets() names them), then `values` on top; the rest take their defaults."""
        body: dict[str, Any] = {"name": name, "description": description, "values": values or {}}
        body.update({"preset": preset} if preset else {})
        return self._call("POST", "configs/", json=body)

    def update_config(self, config_id: int, **fields: Any) -> Json:
        """`values` are knobs set on top of the config's; `preset` lays a preset under them."""
        return self._call("PATCH", f"configs/{config_id}/", json=fields)

    def delete_config(self, config_id: int) -> None:
        self._call("DELETE", f"configs/{config_id}/")

    def config_presets(self) -> list[dict]:
        """The presets a config may start from: each one's `name` and the knobs (`values`) it sets."""
        return self._call("GET", "configs/presets/")
