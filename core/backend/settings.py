"""The settings of one run: what config.json and the system keychain hold, with the start
options (a key from the environment, `--base-url`, `--model`) laid over them for this run
only, never written back."""

from __future__ import annotations

from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

from core import keychain
from core.config import Config, ConfigError, load_config, save_config, updated
from core.errors import CodedError, ErrorCode
from core.i18n import N_, tr
from core.redaction import remember


@dataclass
class Settings:
    config_file: Path
    use_keychain: bool = True  # the key in the system keychain where one answers
    config: Config = field(default_factory=Config)  # in force: saved + this run's options
    saved: Config = field(default_factory=Config)  # what config.json holds
    overrides: dict[str, Any] = field(default_factory=dict)
    warning: str | None = None  # a config or keychain problem, said once at start
    key_place: keychain.Place = keychain.FILE

    def load(self, api_key: str | None = None, base_url: str | None = None,
             model: str | None = None) -> None:
        """Read the file and the keychain; problems are kept in `warning`, not raised."""
        self.saved, self.warning = load_config(self.config_file)
        if self.use_keychain:
            self.saved, self.key_place = keychain.load_key(self.config_file, self.saved)
            self.warning = keychain.with_warning(self.warning, self.key_place)
        overrides = {k: v for k, v in
                     {"api_key": api_key, "base_url": base_url, "model": model}.items() if v}
        try:
            updated(self.saved, **overrides)
            self.overrides = overrides
        except ConfigError as error:
            self.warning = tr("start options ignored: {error}", error=error.said())
        self.config = updated(self.saved, **self.overrides)
        remember(self.config.api_key, self.saved.api_key, self.config.share_token)

    def save(self, changes: dict[str, Any]) -> None:
        """Save `changes` over the saved config and only then apply them.

        A one-run override stays in force for the settings the person did not just set,
        and is never written to the file.
        """
        saved = updated(self.saved, **changes)  # a ConfigError says which value
        place = self.key_place
        if self.use_keychain and saved.api_key != self.saved.api_key:
            place, refused = keychain.keep_key(self.config_file.parent, saved.api_key)
            if refused:
                raise CodedError(N_("could not remove the key from the system keychain: "
                                 "{error}"), ErrorCode.STORE, error=refused)
        try:
            save_config(self.config_file, updated(saved, api_key="")
                        if place.store == "keychain" else saved)
        except OSError as error:
            raise CodedError(N_("could not save the config ({error})"), ErrorCode.STORE,
                          error=error.strerror) from None
        self.saved, self.key_place = saved, place
        self.overrides = {k: v for k, v in self.overrides.items() if k not in changes}
        self.config = updated(saved, **self.overrides)
        remember(self.config.api_key, self.config.share_token)
