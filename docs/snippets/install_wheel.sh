pip install build && python -m build --outdir ~/ccwire-dist   # in the checkout: a wheel and an sdist
mkdir ~/myproject && cd ~/myproject                             # anywhere else
python3 -m venv --upgrade-deps .venv && . .venv/bin/activate
pip install ~/ccwire-dist/ccwire-*.whl 'ccwire[cli]'            # the wheel, with rich
ccwire doctor && ccwire demo                                    # it finds the CLI installed above
