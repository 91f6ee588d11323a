"""A local JupyterLab for trying jupyter_sched's panes by hand:

    jupyter lab --config jupyter-config/jupyter_server_try_config.py

Loopback only and token-protected (the URL with the token is printed). The rate limits are the server's
defaults, written out on purpose: the panes send at most a few messages per second, so they must work
under these values; a pane that trips them is a bug to fix, not a limit to raise.
"""

import os

c = get_config()  # noqa: F821 - provided by the config loader

here = os.path.dirname(os.path.abspath(__file__))

c.ServerApp.ip = "127.0.0.1"
c.ServerApp.open_browser = False
c.ServerApp.root_dir = os.path.join(os.path.dirname(here), "notebooks")

c.ZMQChannelsWebsocketConnection.limit_rate = True
c.ZMQChannelsWebsocketConnection.iopub_msg_rate_limit = 1000.0
c.ZMQChannelsWebsocketConnection.iopub_data_rate_limit = 1000000.0
c.ZMQChannelsWebsocketConnection.rate_limit_window = 3.0
