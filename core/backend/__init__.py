"""The backend: its life cycle, the settings, the open memory and the model session, the
change announcer, and the work done between packets (see `backend.Backend`)."""

from core.backend.backend import Backend

__all__ = ["Backend"]
