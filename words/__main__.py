"""python -m words --checked KEY [KEY ...]: record that these keys' Chinese was checked against their English."""

import sys

from words import main

sys.exit(main())
