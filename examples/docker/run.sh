#!/bin/sh
# SPDX-License-Identifier: MIT
# run.sh - the daemon container and one target container for case CASE,
# which sees only its case's target/ folder (at /mediator).  Run from the
# source tree as root on a host with Docker.
set -eu
case_id=${1:-demo}
mkdir -p /run/ledgerfs
# The mount point must be shared so the daemon's FUSE mount reaches the host.
mount --bind /run/ledgerfs /run/ledgerfs
mount --make-shared /run/ledgerfs
docker build -t ledgerfs -f examples/docker/Dockerfile .
docker run -d --name ledgerfs --device /dev/fuse --cap-add SYS_ADMIN \
	--security-opt apparmor:unconfined \
	-v ledgerfs-state:/var/lib/ledgerfs -v ledgerfs-keys:/etc/ledgerfs \
	--mount type=bind,source=/run/ledgerfs,target=/run/ledgerfs,bind-propagation=rshared \
	ledgerfs
until [ -d /run/ledgerfs/cases ]; do sleep 0.2; done
ledgerctl --mount /run/ledgerfs open "$case_id" --policy examples/policy.yaml \
	--mocks examples/mocks.yaml --env-file "/tmp/$case_id.env"
docker run --rm --network none --env-file "/tmp/$case_id.env" \
	-e LEDGERFS_DIR=/mediator \
	-v "/run/ledgerfs/cases/$case_id/target:/mediator" \
	-v "$(pwd)/examples/agent.sh:/agent.sh:ro" \
	debian:bookworm-slim sh /agent.sh &
ledgerctl --mount /run/ledgerfs wait "$case_id" --timeout 30s
wait
ledgerctl --mount /run/ledgerfs close "$case_id"
docker exec ledgerfs ledgerctl --mount /run/ledgerfs export "$case_id" \
	"/var/lib/ledgerfs/$case_id.tar" --backing /var/lib/ledgerfs/backing
