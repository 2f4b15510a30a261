#!/usr/bin/env bash
# wisp's footprint, measured the way the reference stacks were (issue 9):
# arm-none-eabi-gcc -mthumb -Os -ffunction-sections -fdata-sections, each
# image linked with -Wl,--gc-sections -nostartfiles -Wl,-e,main
# --specs=nano.specs from a never-run main that calls the APIs a typical
# application uses (tools/size/probe_raw.c, probe_full.c), counting only
# what the stack's archives contribute, read from the linker map
# (tools/size/mapsize.py) -- not libc, libgcc, startup or the application.
#
# Images (options headers in tools/size/):
#   raw           no OS, raw API: IPv4, ARP, ICMP, UDP, TCP, IP frag+reass,
#                 DHCP, DNS; every wisp feature on (opts_default.h)
#   raw-lwiplike  the same with lwIP's default TCP feature set: SACK, window
#                 scaling, timestamps, SYN cookies off (opts_lwiplike.h)
#   full          raw + stack thread, netconn, BSD sockets with select,
#                 getaddrinfo, on a stand-in RTOS port with one-pointer
#                 handles (tools/size/sys_probe.[ch], not counted)
#   udp           UDP only (+ DHCP, DNS): core built with WISP_TCP 0
# RAM: the instance struct, per TCP connection (PCB, netconn, socket slot,
# OS objects per netconn) and per UDP PCB, with the same options.
#
# Usage: tools/size-report.sh [--cpu m4|m0|all] [--check] [--doc] [--out DIR]
#   --check  compare the M4 figures with tools/size-budget.txt; exit 1 when
#            one exceeds its budget (the test suite runs this: unit.size_budget)
#   --doc    also write docs/size.md
set -euo pipefail
top=$(cd "$(dirname "$0")/.." && pwd)
cpus=all check=0 doc=0 out=""
while [ $# -gt 0 ]; do
  case $1 in
    --cpu) cpus=$2; shift 2 ;;
    --check) check=1; shift ;;
    --doc) doc=1; shift ;;
    --out) out=$2; shift 2 ;;
    *) echo "usage: $0 [--cpu m4|m0|all] [--check] [--doc] [--out DIR]" >&2; exit 2 ;;
  esac
done
[ "$cpus" = all ] && cpus="m4 m0"
[ "$check" = 1 ] && [ "$cpus" = "m4 m0" ] && [ "$doc" = 0 ] && cpus=m4
out=${out:-$top/build/size}
command -v arm-none-eabi-gcc >/dev/null || { echo "arm-none-eabi-gcc missing (apt-get install gcc-arm-none-eabi libnewlib-arm-none-eabi)"; exit 1; }
mkdir -p "$out"
sz=$top/tools/size
jobs=${JOBS:-2}

# build_lib CPUFLAGS OPTS NAME DIRS...: compile every .c of DIRS into
# $out/NAME/libNAME.a (parallel), with the options header OPTS.
build_lib() {
  local cflags=$1 opts=$2 name=$3; shift 3
  local d=$out/$name
  rm -rf "$d"; mkdir -p "$d"
  # shellcheck disable=SC2086
  find "$@" -maxdepth 1 -name '*.c' | sort | xargs -P "$jobs" -I{} sh -c \
    'f={}; arm-none-eabi-gcc '"$cflags"' -DWISP_OPTS_HEADER="\"'"$opts"'\"" -I'"$top"'/include -I'"$sz"' -c "$f" -o "'"$d"'/$(basename "$f" .c).o"'
  arm-none-eabi-ar rcs "$d/lib$name.a" "$d"/*.o
}

# link CPUFLAGS OPTS IMAGE MAIN LIBS...: link MAIN (+ sys_probe.c) against
# LIBS, write IMAGE.map and print the stack's share as JSON.
link_image() {
  local cflags=$1 opts=$2 image=$3 main=$4; shift 4
  local objs=() names=()
  arm-none-eabi-gcc $cflags -DWISP_OPTS_HEADER="\"$opts\"" -I"$top/include" -I"$sz" -c "$main" -o "$out/$image.main.o"
  objs+=("$out/$image.main.o")
  if [ "$main" = "$sz/probe_full.c" ]; then
    arm-none-eabi-gcc $cflags -DWISP_OPTS_HEADER="\"$opts\"" -I"$top/include" -I"$sz" -c "$sz/sys_probe.c" -o "$out/$image.sys.o"
    objs+=("$out/$image.sys.o")
  fi
  for l in "$@"; do names+=("$(basename "$l")"); done
  # shellcheck disable=SC2086
  arm-none-eabi-gcc $cflags -Wl,--gc-sections -nostartfiles -Wl,-e,main --specs=nano.specs --specs=nosys.specs \
      "${objs[@]}" -Wl,--start-group "$@" -Wl,--end-group -Wl,-Map,"$out/$image.map" -o "$out/$image.elf"
  python3 "$sz/mapsize.py" "$out/$image.map" "${names[@]}"
}

# sizes CPUFLAGS OPTS NAME: nm -S of tools/size/sizeof.c -> "sym=size ..."
sizes() {
  arm-none-eabi-gcc $1 -DWISP_OPTS_HEADER="\"$2\"" -I"$top/include" -I"$sz" -c "$sz/sizeof.c" -o "$out/$3.sizeof.o"
  arm-none-eabi-nm -S "$out/$3.sizeof.o" | while read -r _ size _ name; do printf '%s=%d ' "$name" "$((16#$size))"; done
}

# OS objects held by one netconn: members of struct wisp_netconn whose type
# is an OS handle (wisp_sys_mbox_t / sem_t / mutex_t).
os_objects=$(awk '/^struct wisp_netconn \{/{f=1; next} f && /^\};/{f=0} f && /wisp_sys_(mbox|sem|mutex)_t/{n++} END{print n+0}' \
             "$top/include/wisp/priv/netconn.h")

results=$out/results.txt
: > "$results"
for cpu in $cpus; do
  case $cpu in
    m4) mcpu="-mcpu=cortex-m4" ;;
    m0) mcpu="-mcpu=cortex-m0" ;;
    *) echo "unknown cpu $cpu" >&2; exit 2 ;;
  esac
  cflags="$mcpu -mthumb -Os -std=c99 -ffunction-sections -fdata-sections -w"
  build_lib "$cflags" opts_default.h "wcore_$cpu" "$top/src/core" "$top/src/netif"
  build_lib "$cflags" opts_default.h "wapi_$cpu" "$top/src/api"
  build_lib "$cflags" opts_lwiplike.h "wcorel_$cpu" "$top/src/core" "$top/src/netif"
  build_lib "$cflags" opts_udp.h "wcoreu_$cpu" "$top/src/core" "$top/src/netif"
  core=$out/wcore_$cpu/libwcore_$cpu.a api=$out/wapi_$cpu/libwapi_$cpu.a
  {
    echo "$cpu raw $(link_image "$cflags" opts_default.h "raw_$cpu" "$sz/probe_raw.c" "$core")"
    echo "$cpu raw-lwiplike $(link_image "$cflags" opts_lwiplike.h "rawl_$cpu" "$sz/probe_raw.c" "$out/wcorel_$cpu/libwcorel_$cpu.a")"
    echo "$cpu full $(link_image "$cflags" opts_default.h "full_$cpu" "$sz/probe_full.c" "$api" "$core")"
    echo "$cpu udp $(link_image "$cflags" opts_udp.h "udp_$cpu" "$sz/probe_raw.c" "$out/wcoreu_$cpu/libwcoreu_$cpu.a")"
    echo "$cpu ram-default $(sizes "$cflags" opts_default.h "d_$cpu")"
    echo "$cpu ram-lwiplike $(sizes "$cflags" opts_lwiplike.h "l_$cpu")"
    echo "$cpu ram-udp $(sizes "$cflags" opts_udp.h "u_$cpu")"
  } >> "$results"
done

python3 "$sz/report.py" "$results" "$top/tools/size-budget.txt" "$os_objects" \
  $([ "$check" = 1 ] && echo --check) $([ "$doc" = 1 ] && echo --doc "$top/docs/size.md")
