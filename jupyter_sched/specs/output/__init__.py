"""What may be shown, by one rule each: secrets masked, names made safe, apps labelled in output.

* :mod:`.masking` -- the one rule for what no output shows: secrets in env values, command lines, URLs, JSON.
* :mod:`.names` -- a free-text app or role name as a safe path component or engine name.
* :mod:`.labels` -- how an app is named in stream and error output that a notebook turns into links.
"""
