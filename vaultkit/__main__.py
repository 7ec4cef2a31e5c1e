import sys

from vaultkit.cli import main

sys.exit(main())
