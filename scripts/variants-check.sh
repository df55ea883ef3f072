#!/usr/bin/env bash
# SPDX-License-Identifier: GPL-2.0
#
# The variant table (scripts/variants.tsv) is one make check can run: a
# mistake in it would otherwise show as a stage that silently does not run,
# or runs where it cannot pass, or as a kernel rebuilt cold under a new name.
# Checks that
# - every row is of a known type with its fields, keys are unique;
# - a variant's arch and release have rows, its kind is known, its name is
#   [ARCH-]KIND[SUFFIX] (the arch left out for the first arch row, SUFFIX
#   its release's), its kconfig fragments exist; an overlay has a base
#   (a built variant of its arch and release), no other row has one;
# - every stages row names a lane (a, b) and a variant make check builds;
#   every token is known, its argument valid, its variant's kind and its
#   arch's caps allow it; a variant's ftracetest shares cover 1..N once;
# - the expectation files the tokens read exist.
# Prints each problem and fails if there is one. Reads nothing but the
# repository (a host stage of make check).
set -uo pipefail
. "$(dirname "$0")/lib.sh"

bad=0
problem() { echo "variants-check: $*"; bad=$((bad + 1)); }
T=scripts/variants.tsv
# Expectation files are named relative to the repository.
need() { # FILE WHY
	[ -f "$ROOT/$1" ] || problem "$1 is missing ($2)"
}

# Row types, field counts, unique keys.
while read -r n type key nf; do
	case "$type" in
	arch) [ "$nf" -ge 9 ] || problem "$T:$n: an arch row has ARCH IMAGE QEMU MACHINE CONSOLE BINDIR CAPS GUEST-CC" ;;
	release) [ "$nf" = 4 ] || problem "$T:$n: a release row has RELEASE SUFFIX GONE-SYMBOLS" ;;
	variant) [ "$nf" = 5 ] || [ "$nf" = 6 ] || problem "$T:$n: a variant row has NAME ARCH RELEASE KIND [BASE]" ;;
	stages) [ "$nf" -ge 4 ] || problem "$T:$n: a stages row has LANE VARIANT TOKEN..." ;;
	*) problem "$T:$n: no row type $type (arch, release, variant, stages)" ;;
	esac
done < <(awk '!/^[ \t]*(#|$)/ { print NR, $1, $2, NF }' "$VARIANTS_TSV")
while read -r dup; do
	problem "$T: more than one row $dup"
done < <(awk '$1 ~ /^(arch|release|variant)$/ { print $1, $2 }' "$VARIANTS_TSV" | sort | uniq -d)
[ -n "$(arches)" ] || problem "$T: no arch row"
[ -n "$(releases)" ] || problem "$T: no release row"
[ $bad = 0 ] || { echo "variants-check: $bad problem(s)"; exit 1; }

first_arch=$(arches | head -1)
for a in $(arches); do
	[ -f "$ROOT/kconfig/$a.config" ] || problem "arch $a: no kconfig/$a.config"
	[ -n "$(guest_cc "$a")" ] || problem "arch $a: no guest C compiler"
	for cap in $(table_field arch "$a" 8 | tr ',' ' '); do
		case "$cap" in fixed-qemu | hostroot) ;; *) problem "arch $a: no capability $cap (fixed-qemu, hostroot)" ;; esac
	done
done
for r in $(releases); do
	s=$(release_suffix "$r")
	[ -z "$s" ] || [ "$s" = "-$r" ] || problem "release $r: its suffix is -$r or nothing, not $s"
done

# The variants.
for v in $(variants); do
	a=$(table_field variant "$v" 3) r=$(table_field variant "$v" 4) k=$(table_field variant "$v" 5) base=$(table_field variant "$v" 6)
	arches | grep -qxF -- "$a" || { problem "variant $v: no arch $a"; continue; }
	releases | grep -qxF -- "$r" || { problem "variant $v: no release $r"; continue; }
	case "$k" in
	test | ref | debug | pristine)
		want=$k$(release_suffix "$r")
		[ "$a" = "$first_arch" ] || want=$a-$want
		[ "$v" = "$want" ] || problem "variant $v: a $k kernel on $a $r is named $want"
		[ -z "$base" ] || problem "variant $v: only an overlay has a base"
		for f in base "$a" "$(variant_config "$v")"; do
			[ -f "$ROOT/kconfig/$f.config" ] || problem "variant $v: no kconfig/$f.config"
		done ;;
	overlay)
		if [ -z "$base" ]; then
			problem "variant $v: an overlay names its base"
		elif ! table_has variant "$base"; then
			problem "variant $v: no base variant $base"
		else
			case "$(variant_kind "$base")" in test | ref | debug) ;; *) problem "variant $v: its base $base is not a built kernel" ;; esac
			[ "$(variant_arch "$base")/$(variant_kver "$base")" = "$a/$r" ] ||
				problem "variant $v: its base $base is of another arch or release"
		fi ;;
	*) problem "variant $v: no kind $k (test, ref, debug, pristine, overlay)" ;;
	esac
done
[ $bad = 0 ] || { echo "variants-check: $bad problem(s)"; exit 1; }

# The stages.
declare -A seen shares
while read -r l v toks; do
	case "$l" in a | b) ;; *) problem "stages $l $v: no lane $l (a, b)" ;; esac
	if ! table_has variant "$v"; then
		problem "stages $l $v: no variant $v"; continue
	fi
	k=$(variant_kind "$v") a=$(variant_arch "$v") r=$(variant_kver "$v") sfx=$(variant_suffix "$v")
	case "$k" in test | ref | debug) ;; *) problem "stages $l $v: make check builds no $k kernel"; continue ;; esac
	for tok in $toks; do
		t=${tok%%:*} arg=
		[ "$t" = "$tok" ] || arg=${tok#*:}
		[ -z "${seen[$v $tok]:-}" ] || problem "stages $v: $tok twice"
		seen[$v $tok]=1
		kinds= caps=
		case "$t" in
		load | race)
			[[ "$arg" =~ ^[1-9][0-9]*$ ]] || problem "stages $v: $t takes a timeout in seconds ($t:300), not '$arg'"
			kinds="test debug"; [ "$t" = race ] && { kinds="test ref debug" caps=fixed-qemu; } ;;
		ft)
			if [ -n "$arg" ]; then
				if [[ "$arg" =~ ^([1-9][0-9]*)/([1-9][0-9]*)$ ]] && [ "${BASH_REMATCH[1]}" -le "${BASH_REMATCH[2]}" ]; then
					shares[$v]+=" $arg"
				else
					problem "stages $v: ft takes a share K/N with 1 <= K <= N, not '$arg'"
				fi
				caps=fixed-qemu
			fi
			kinds="test ref debug"
			if [ "$k" = debug ]; then
				need "tests/ftracetest-$(variant_partner "$v" test).expect" "ft on $v: its test partner's expectation"
			else
				need "tests/ftracetest-$v.expect" "ft on $v"
			fi ;;
		own)
			kinds="test ref debug"
			[ "$k" != ref ] || need tests/owntests-c-too.txt "own on $v" ;;
		tools) kinds="test ref debug" caps=hostroot ;;
		ftcore) kinds=ref; need "tests/ftracetest-core-$r.expect" "ftcore on $v" ;;
		oracle)
			kinds=ref
			need "tests/vectors/c-ref$sfx.txt" "oracle on $v"
			need "tests/vectors/btf$sfx.raw" "oracle on $v" ;;
		diff) kinds=ref ;;
		hostile)
			kinds=ref
			[ -n "$(variants arch="$a" release="$r" kind=test)" ] || problem "stages $v: hostile needs a test kernel on $a $r"
			need tests/hostile/known-differences.txt "hostile on $v" ;;
		benchvm) kinds=ref; need "tests/bench/ratios$sfx.txt" "benchvm on $v" ;;
		benchcreate) kinds=ref ;;
		loadlock | failslab) kinds=debug ;;
		stress) kinds=debug caps=fixed-qemu ;;
		racebroken)
			kinds=debug caps=fixed-qemu
			[ -n "$(variants kind=overlay base="$v")" ] || problem "stages $v: racebroken boots an overlay of $v, and the table has none" ;;
		*) problem "stages $v: no token $t"; continue ;;
		esac
		case "$t" in load | race | ft) ;; *) [ -z "$arg" ] || problem "stages $v: $t takes no argument" ;; esac
		case " $kinds " in *" $k "*) ;; *) problem "stages $v: $t is not for a $k kernel (only $kinds)" ;; esac
		[ -z "$caps" ] || arch_can "$v" "$caps" || problem "stages $v: $tok needs $caps, which $a does not offer"
	done
done < <(stage_rows)
for v in "${!shares[@]}"; do
	set -- ${shares[$v]}
	n=${1#*/} want=
	for ((i = 1; i <= n; i++)); do want+=" $i/$n"; done
	[ "$(printf '%s\n' "$@" | sort | tr '\n' ' ')" = "$(printf '%s\n' $want | sort | tr '\n' ' ')" ] ||
		problem "stages $v: the ftracetest shares are$(printf ' %s' "$@"), not each of$want once"
done

if [ $bad != 0 ]; then
	echo "variants-check: $bad problem(s) in $T"
	exit 1
fi
echo "variants-check: $(variants | wc -l) variants, $(stage_rows | wc -l) stages rows: names, fragments, tokens, capabilities and expectation files agree"
