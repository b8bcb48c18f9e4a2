#!/bin/sh
# A camera from the network: uncompressed RTP (pipelines/rtp-send.sh on
# another machine) received on PORT and fed to a vstream output node, so
# browsers and other readers of its capture node see the sender's video.
#   pipelines/rtp-camera.sh OUT [PORT]     (WIDTH, HEIGHT: the sender's)
# The depayloader says framerate=0/1 (frames come as the network brings
# them): vstreamsink takes that as it is, no videorate needed.
OUT=${1:?usage: rtp-camera.sh OUT [PORT]}
PORT=${2:-5004}
W=${WIDTH:-320} H=${HEIGHT:-240}
CAPS="application/x-rtp,media=video,clock-rate=90000,encoding-name=RAW"
CAPS="$CAPS,sampling=YCbCr-4:2:2,depth=(string)8,width=(string)$W"
CAPS="$CAPS,height=(string)$H,colorimetry=(string)BT601-5,payload=96"
exec gst-launch-1.0 -q udpsrc port=$PORT caps="$CAPS" ! \
	rtpjitterbuffer latency=${LATENCY:-50} ! rtpvrawdepay ! videoconvert ! \
	video/x-raw,format=YUY2 ! vstreamsink device="$OUT" sync=false
