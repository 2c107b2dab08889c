#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0-or-later
# dmcrypt against the real kernel's dm-crypt, both ways, in one boot of
# Debian's kernel (tests/kernel/kernel.sh, docs/kernel-tests.md).  For
# each case (LUKS1, LUKS2 with 512- and 4096-byte sectors, a detached
# LUKS2 header, plain tables over the cipher and IV modes both have):
#   A. the host writes a random pattern over the whole device through
#      dmcrypt; in the guest, cryptsetup open or dmsetup create maps the
#      image and the mapped device has the pattern's size and sha256;
#   B. the guest then writes a second pattern over the device's second
#      half through the kernel's mapping; through dmcrypt the host reads
#      the first half of A and the second half of B;
#   C. dmcryptctl table --showkeys, status and info of dmcrypt's mapping
#      equal the guest's dmsetup output for the same mapping (device
#      field and major/minor aside).
# Each case prints PASS or FAIL with its name.
#
# The quick run has one case of each kind: every LUKS layout, every IV
# generator and chain mode (with xts or with cbc), ecb, capi:, Camellia,
# 4096-byte sectors, offsets (20 cases); the full run
# (DMCRYPT_TEST_FULL=1) has each IV generator with both xts and cbc,
# LUKS1 with cbc-essiv, elephant and eboiv with 512-byte sectors too
# (29 cases).
# KERNEL_CASES="NAME..." runs those cases only.  MUTATE=iv serves the
# plain tables on the host with an iv_offset one encryption sector off,
# MUTATE=offset with the data one encryption sector further in, and
# MUTATE=read-iv does as iv only after the boot (A passes, B must fail):
# the comparisons must then fail (tests/test-kernel-selfcheck.sh).
# MUTATE="NAME=MODE..." mutates those cases only.
# sanitizer: none
source "$(dirname "$0")/functions.sh"
source "$srcdir/kernel/kernel.sh"
plugin_built_or_fail
ctl="$topdir/tools/dmcryptctl"
[ -x "$ctl" ] || fail "$ctl is not built: run make first"
requires_cmd cryptsetup nbdkit nbdcopy nbdinfo
mutate=${MUTATE:-}
mutation ()  # mutation NAME: the MODE of MUTATE for case NAME, if any
{
  local w
  for w in $mutate; do
    case $w in
      "$1"=*) echo "${w#*=}" ;;
      *=*) ;;
      *) echo "$w" ;;
    esac
  done
}
for w in $mutate; do
  case ${w#*=} in
    iv|offset|read-iv) ;;
    *) fail "MUTATE=$mutate: iv, offset or read-iv, or NAME=MODE ..." ;;
  esac
done
scratch
cd "$tmp" || fail "cd $tmp"
kernel_setup

pw=kernel-test-passphrase
printf %s "$pw" > pw
key64=$(random_hex 64) key32=$(random_hex 32)

# NAME KIND ARGS: KIND plain takes "CIPHER KEY IV_OFFSET OFFSET
# LEN [OPTIONS...]" (sectors of 512 bytes); luks1, luks2 and detached
# take "SIZE_MIB DATA_MIB luksFormat-arguments".
all_cases=(
  "luks1 luks1 4 2 --cipher aes-xts-plain64 --key-size 512"
  "luks1-cbc-essiv luks1 4 2 --cipher aes-cbc-essiv:sha256 --key-size 256"
  "luks2-512 luks2 17 1 --sector-size 512"
  "luks2-4096 luks2 17 1 --sector-size 4096"
  "luks2-detached detached 1 1 --sector-size 4096"
  "xts-plain64 plain aes-xts-plain64 $key64 0 0 2048"
  "xts-plain plain aes-xts-plain $key64 0 0 2048"
  "xts-plain64be plain aes-xts-plain64be $key64 0 0 2048"
  "xts-essiv plain aes-xts-essiv:sha256 $key64 0 0 2048"
  "xts-benbi plain aes-xts-benbi $key64 0 0 2048"
  "xts-null plain aes-xts-null $key64 0 0 2048"
  "xts-eboiv plain aes-xts-eboiv $key64 0 0 2048"
  "xts-256-offsets plain aes-xts-plain64 $key32 12345 7 2048"
  "xts-4096-large plain aes-xts-plain64 $key64 8 16 2048 2 sector_size:4096 iv_large_sectors"
  "xts-4096 plain aes-xts-plain64 $key64 64 8 2048 1 sector_size:4096"
  "cbc-plain plain aes-cbc-plain $key32 0 0 2048"
  "cbc-plain64 plain aes-cbc-plain64 $key32 0 0 2048"
  "cbc-plain64be plain aes-cbc-plain64be $key32 0 0 2048"
  "cbc-essiv plain aes-cbc-essiv:sha256 $key32 0 0 2048"
  "cbc-essiv-4096 plain aes-cbc-essiv:sha256 $key32 24 8 2048 1 sector_size:4096"
  "cbc-benbi plain aes-cbc-benbi $key32 0 0 2048"
  "cbc-null plain aes-cbc-null $key32 0 0 2048"
  "cbc-eboiv plain aes-cbc-eboiv $key32 0 0 2048"
  "cbc-eboiv-4096 plain aes-cbc-eboiv $key32 0 0 2048 1 sector_size:4096"
  "ecb plain aes-ecb $key32 0 0 2048"
  "cbc-elephant plain aes-cbc-elephant $key64 0 0 2048"
  "cbc-elephant-4096 plain aes-cbc-elephant $key32 8 0 2048 1 sector_size:4096"
  "capi-xts plain capi:xts(aes)-plain64 $key64 0 0 2048"
  "camellia-cbc-essiv plain camellia-cbc-essiv:sha256 $key32 0 0 2048"
)
quick_cases="luks1 luks2-512 luks2-4096 luks2-detached xts-plain64 cbc-plain
  xts-plain64be cbc-essiv xts-benbi cbc-null xts-eboiv cbc-eboiv-4096 ecb
  cbc-elephant-4096 capi-xts camellia-cbc-essiv xts-256-offsets
  xts-4096-large xts-4096 cbc-essiv-4096"
want_cases=${KERNEL_CASES:-}
if [ -z "$want_cases" ]; then
  if full_run; then
    echo "full run: all ${#all_cases[@]} cases"
  else
    want_cases=$(echo $quick_cases)
    echo "quick run: one case of each kind; DMCRYPT_TEST_FULL=1 for all" \
         "${#all_cases[@]}"
  fi
fi
cases=()
for c in "${all_cases[@]}"; do
  name=${c%% *}
  if [ -n "$want_cases" ]; then
    case " $want_cases " in *" $name "*) ;; *) continue ;; esac
  fi
  cases+=("$c")
done
[ ${#cases[@]} -gt 0 ] || fail "KERNEL_CASES=$KERNEL_CASES names no case"

# Per case: host_args[NAME] (the plugin's arguments; read_args[NAME]
# after the boot), drives, the guest's commands to map and unmap the
# image; size[NAME] bytes of export.
declare -A host_args read_args guest_open guest_close size
drives=()
# The kernel's virtio disk names: vda … vdz, vdaa, vdab …
letter ()
{
  if (( $1 >= 26 )); then letter $(( $1 / 26 - 1 )); fi
  printf "\\x$(printf %x $(( 97 + $1 % 26 )))"
}
new_drive ()  # new_drive IMAGE: sets dev to its /dev/vdX in the guest
{
  dev=/dev/vd$(letter ${#drives[@]})
  drives+=("$tmp/$1")
}
for c in "${cases[@]}"; do
  read -r name kind rest <<<"$c"
  case $kind in
    plain)
      read -r cipher key ivoff off len opts <<<"$rest"
      # One encryption sector to spare, for MUTATE=offset.
      truncate -s $(( (off + len + 8) * 512 )) "$name.img"
      new_drive "$name.img"
      table="0 $len crypt $cipher $key $ivoff $dev $off${opts:+ $opts}"
      guest_open[$name]="dmsetup create $name --table '$table'"
      guest_close[$name]="dmsetup remove $name"
      ss=512
      [[ $opts == *sector_size:4096* ]] && ss=4096
      host_table ()  # host_table IV_OFFSET OFFSET
      {
        echo "file=$name.img table=0 $len crypt $cipher $key $1 $name.img $2${opts:+ $opts}"
      }
      m=$(mutation "$name")
      case $m in
        iv)      host_args[$name]=$(host_table $(( ivoff + ss / 512 )) "$off") ;;
        offset)  host_args[$name]=$(host_table "$ivoff" $(( off + ss / 512 ))) ;;
        *)       host_args[$name]=$(host_table "$ivoff" "$off") ;;
      esac
      [ "$m" = read-iv ] \
        && read_args[$name]=$(host_table $(( ivoff + ss / 512 )) "$off")
      size[$name]=$(( len * 512 )) ;;
    luks1|luks2|detached)
      read -r mib data_mib fmt <<<"$rest"
      truncate -s "${mib}M" "$name.img"
      # shellcheck disable=SC2086
      if [ "$kind" = detached ]; then
        luks_format luks2 "$name.img" "$pw" --header "$name.hdr" $fmt \
          || fail "$name: luksFormat"
        new_drive "$name.img"; data=$dev
        new_drive "$name.hdr"
        guest_open[$name]="cryptsetup open --disable-keyring --key-file /guest/pw --header $dev $data $name"
        host_args[$name]="file=$name.img header=$name.hdr passphrase=+pw"
      else
        luks_format "$kind" "$name.img" "$pw" $fmt || fail "$name: luksFormat"
        new_drive "$name.img"
        guest_open[$name]="cryptsetup open --disable-keyring --key-file /guest/pw $dev $name"
        host_args[$name]="file=$name.img passphrase=+pw"
      fi
      guest_close[$name]="cryptsetup close $name"
      size[$name]=$(( data_mib * 1048576 )) ;;
  esac
  read_args[$name]=${read_args[$name]:-${host_args[$name]}}
done

# serve NAME CMD [ARGS]: CMD against dmcrypt's mapping of case NAME
# (control socket $tmp/ctl.sock, volume name NAME) with the plugin's
# arguments ARGS (by default ${host_args[NAME]}; a table= comes last).
serve ()
{
  local -a args
  local a=${3:-${host_args[$1]}}
  read -r -a args <<<"${a%%table=*}"
  [[ $a == *table=* ]] && args+=("table=${a#*table=}")
  serve_dmcrypt "$2" "${args[@]}" name="$1" control="$tmp/ctl.sock"
}

# ---- Before the boot: A written through dmcrypt; the guest's script --
mkdir -p boot/guest
cp pw boot/guest/pw
{
  echo 'set -u'
  echo 'case_failed () { echo "$1: error $2"; }'
}> guest.sh
declare -A failed
for c in "${cases[@]}"; do
  name=${c%% *} s=${size[$name]} half=$(( size[$name] / 2 ))
  random_file "$name.a" "$s"
  random_file "boot/guest/$name.b" "$half"
  if ! serve "$name" 'nbdinfo --size "$uri" && nbdcopy "'"$name.a"'" "$uri"' \
        > "$name.hostsize" 2> "$name.err"; then
    failed[$name]="dmcrypt refused it: $(head -n 1 "$name.err")"
    continue
  fi
  cat >> guest.sh <<G
echo "$name: begin"
if ${guest_open[$name]}; then
  echo "$name: size \$(blockdev --getsize64 /dev/mapper/$name)"
  echo "$name: sha256 \$(sha256sum < /dev/mapper/$name | cut -d' ' -f1)"
  dmsetup table --showkeys $name | sed 's/^/$name: table /'
  dmsetup status $name | sed 's/^/$name: status /'
  dmsetup info $name | sed 's/^/$name: info /'
  dd if=/guest/$name.b of=/dev/mapper/$name bs=4096 seek=$(( half / 4096 )) \
    oflag=direct conv=fsync status=none || case_failed $name "dd"
  ${guest_close[$name]} || case_failed $name "close"
else
  case_failed $name "open"
fi
echo "$name: end"
G
done

# ---- The boot ---------------------------------------------------------
echo "booting $kver with ${#drives[@]} drives for ${#cases[@]} cases"
kernel_boot_cases boot guest.sh "${drives[@]}"

# ---- After the boot: B read through dmcrypt, the control tool --------
npass=0 nfail=0
for c in "${cases[@]}"; do
  name=${c%% *} s=${size[$name]} half=$(( size[$name] / 2 ))
  why=${failed[$name]:-}
  g () { sed -n "s/^$name: $1 \{0,1\}//p" guest.out; }
  if [ -z "$why" ]; then
    err=$(g error | head -n 1)
    [ -n "$err" ] && why="the guest's $err failed: $(grep -m3 -v "^[a-z0-9-]*: " guest.out | tr '\n' ' ')"
  fi
  if [ -z "$why" ] && ! grep -qx "$name: end" guest.out; then
    why="the guest did not reach the end of the case"
  fi
  if [ -z "$why" ]; then
    [ "$(g size)" = "$s" ] && [ "$(head -n 1 "$name.hostsize")" = "$s" ] \
      || why="size: dmcrypt $(head -n 1 "$name.hostsize"), kernel $(g size), want $s"
  fi
  if [ -z "$why" ]; then
    [ "$(g sha256)" = "$(sha256_of "$name.a")" ] \
      || why="A: the kernel reads other data than dmcrypt wrote"
  fi
  if [ -z "$why" ]; then
    head -c "$half" "$name.a" > "$name.want"
    cat "boot/guest/$name.b" >> "$name.want"
    serve "$name" 'nbdcopy "$uri" "'"$name.back"'" &&
      '"'$ctl'"' table --showkeys "'"$tmp/ctl.sock"'" > "'"$name.ctl-table"'" &&
      '"'$ctl'"' status "'"$tmp/ctl.sock"'" > "'"$name.ctl-status"'" &&
      '"'$ctl'"' info "'"$tmp/ctl.sock"'" > "'"$name.ctl-info"'"' \
      "${read_args[$name]}" \
      2> "$name.err" || why="dmcrypt: $(head -n 1 "$name.err")"
  fi
  if [ -z "$why" ]; then
    cmp -s "$name.want" "$name.back" \
      || why="B: dmcrypt reads other data than the kernel wrote"
  fi
  if [ -z "$why" ]; then
    [ "$(g table | kernel_mask_device)" = "$(kernel_mask_device < "$name.ctl-table")" ] \
      || why="table: kernel '$(g table | kernel_mask_device)', dmcryptctl '$(kernel_mask_device < "$name.ctl-table")'"
  fi
  if [ -z "$why" ]; then
    [ "$(g status)" = "$(cat "$name.ctl-status")" ] \
      || why="status: kernel '$(g status)', dmcryptctl '$(cat "$name.ctl-status")'"
  fi
  if [ -z "$why" ]; then
    [ "$(g info | kernel_info_fields)" = "$(kernel_info_fields < "$name.ctl-info")" ] \
      || why="info: kernel '$(g info | kernel_info_fields | tr '\n' ';')', dmcryptctl '$(kernel_info_fields < "$name.ctl-info" | tr '\n' ';')'"
  fi
  kernel_verdict "$name" "$why"
done
echo "kernel $kver: $npass cases passed, $nfail failed${mutate:+ (MUTATE=$mutate)}"
if [ $nfail -ne 0 ]; then
  echo "the guest's output:"
  sed 's/^/    /' guest.out
  exit 1
fi
