"""What the Python tests share: finding a marked line in a script."""


def line_of(script, marker):
    """The 1-based number of the first line of `script` holding `marker`."""
    with open(script) as f:
        for n, text in enumerate(f, 1):
            if marker in text:
                return n
    raise SystemExit("marker %r not in %s" % (marker, script))
