# First, before anything else is imported: `python -m ddplint` put the current folder (the project
# being checked) first on sys.path, where a file named like a standard module would be imported
# instead of it. Only `ddplint` (no imports) and `ddplint.isolation` (os, sys) load before this.
from ddplint.isolation import leave_workspace_out

leave_workspace_out()

import sys  # noqa: E402

from ddplint.cli import main  # noqa: E402

sys.exit(main())
