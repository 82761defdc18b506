git clone <this repository> ccwire && cd ccwire
python3 -m venv --upgrade-deps .venv             # Python 3.10 or newer, with a current pip
. .venv/bin/activate
pip install '.[cli]'                             # ccwire, with rich for the live display
npm install --prefix ~/.ccwire/cli @anthropic-ai/claude-code@2.1.330   # the pinned CLI
ccwire doctor                                    # checks everything, prints fixes
ccwire demo                                      # a first run, offline: no API key needed
