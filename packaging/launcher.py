"""The frozen executable's entry script: the same `trulymem` command as the installed one."""

import sys

from app.main import main

if __name__ == "__main__":
    sys.exit(main())
