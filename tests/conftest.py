"""Suite-wide settings.

The daemon analyses every match it archives in a background child process (bot.analysis_jobs, 2-ply by
default). In the suite that would put a 2-ply analysis beside every test that archives a match, loading the
small CI machine for nothing the test looks at; tests of the background analysis drive it directly.
"""

import os

os.environ.setdefault("GAMMOND_ANALYSIS", "off")
