#!/usr/bin/python3
"""A vstream capture node served over RTSP (gst-rtsp-server): H.264 any
RTSP client plays, at rtsp://THIS-HOST:PORT/cam (pipelines/rtsp-camera.sh
on another machine, ffplay, VLC, OBS's media source).

  pipelines/rtsp-serve.py CAP [PORT]      (PORT: 8554)

Every client shares one reader of the node and one encoder.  BITRATE
(kbit/s, default 2000).  Needs gir1.2-gst-rtsp-server-1.0 and x264enc
(gst-plugins-ugly).
"""
import os
import sys

import gi

gi.require_version('Gst', '1.0')
gi.require_version('GstRtspServer', '1.0')
from gi.repository import GLib, Gst, GstRtspServer  # noqa: E402

if len(sys.argv) < 2:
    sys.exit('usage: rtsp-serve.py CAP [PORT]')
Gst.init(None)
server = GstRtspServer.RTSPServer(service=sys.argv[2] if len(sys.argv) > 2 else '8554')
factory = GstRtspServer.RTSPMediaFactory()
# a key frame every 30 and the parameter sets with each: a client that
# joins late or loses packets gets a picture within a second at 30 fps
factory.set_launch(
    '( vstreamsrc device="%s" ! videoconvert ! x264enc tune=zerolatency '
    'speed-preset=ultrafast bitrate=%s key-int-max=30 ! '
    'video/x-h264,profile=constrained-baseline ! '
    'rtph264pay name=pay0 pt=96 config-interval=-1 )'
    % (sys.argv[1], os.environ.get('BITRATE', '2000')))
factory.set_shared(True)
server.get_mount_points().add_factory('/cam', factory)
if server.attach(None) == 0:
    sys.exit('rtsp-serve.py: cannot listen on port %s' % server.get_service())
print('rtsp-serve.py: rtsp://%s:%s/cam' % (GLib.get_host_name(), server.get_service()),
      flush=True)
GLib.MainLoop().run()
