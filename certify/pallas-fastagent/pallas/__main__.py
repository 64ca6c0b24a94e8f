import sys

from pallas.server import main

sys.exit(main())
