"""The session-wide guard: no test can reach the person's real ~/.trulymem."""

import os
from pathlib import Path

from core.paths import data_home
from tests.conftest import GUARD_HOME, REAL_HOME


def test_tests_never_see_the_real_home():
    assert Path.home().is_relative_to(GUARD_HOME)
    assert data_home().is_relative_to(GUARD_HOME)
    assert not data_home().is_relative_to(Path(REAL_HOME) / ".trulymem")
    assert os.environ["HOME"] != REAL_HOME
