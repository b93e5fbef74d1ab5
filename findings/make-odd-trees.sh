#!/bin/bash
# make-odd-trees.sh OUT: builds the damaged sysfs trees the red-team findings use,
# each a copy of testdata/sysfs/mlx5 with one thing broken (run from the repository
# root). Every tree is then read with `ibkey --sysfs OUT/NAME ...` (see README.md).
set -eu
out=${1:?usage: make-odd-trees.sh OUT}
src=testdata/sysfs/mlx5
mk() { rm -rf "$out/$1"; mkdir -p "$out"; cp -a "$src" "$out/$1"; }
dev0=devices/pci0000:00/0000:03:00.0
# net-dangling: class/net/ib0.8002's target is gone (a saved tree that lost it).
mk net-dangling; rm -rf "$out/net-dangling/$dev0/net/ib0.8002"
# net-type-unreadable: class/net/ib0.8004/type cannot be read (a link to itself: ELOOP;
# chmod 000 with a non-root reader gives EACCES the same way).
mk net-type-unreadable; t="$out/net-type-unreadable/$dev0/net/ib0.8004/type"; rm "$t"; ln -s type "$t"
# gid0-missing: mlx5_0/1 has no gids/0, so no IPoIB interface can be matched to it.
mk gid0-missing; rm "$out/gid0-missing/$dev0/infiniband/mlx5_0/ports/1/gids/0"
# linklayer-missing: mlx5_0/1 has no link_layer file.
mk linklayer-missing; rm "$out/linklayer-missing/$dev0/infiniband/mlx5_0/ports/1/link_layer"
# counters-bad: counter files holding what no kernel writes (300 in an 8-bit counter,
# an empty file).
mk counters-bad; c="$out/counters-bad/$dev0/infiniband/mlx5_0/ports/1/counters"
echo 300 > "$c/port_xmit_constraint_errors"; : > "$c/port_rcv_constraint_errors"
# state-garbage: mlx5_0/1/state holds no "N: NAME".
mk state-garbage; echo garbage > "$out/state-garbage/$dev0/infiniband/mlx5_0/ports/1/state"
echo "built in $out: net-dangling net-type-unreadable gid0-missing linklayer-missing counters-bad state-garbage"
