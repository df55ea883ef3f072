# SPDX-License-Identifier: GPL-2.0
# Shared helpers for the build scripts: timed stages and common paths.

ROOT=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
CACHE=${RKPE_CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/rust-kprobe-events}
# bindgen loads the newest libclang it finds: with LLVM 19 installed for 7.3,
# that would be 19's, where 6.12's builds use Debian 12's default LLVM (14)
# throughout. Every script takes 14's unless told otherwise; kernel.sh sets
# a tree's own (tree_libclang).
[ -n "${LIBCLANG_PATH:-}" ] || [ ! -d /usr/lib/llvm-14/lib ] || export LIBCLANG_PATH=/usr/lib/llvm-14/lib
export PATH="$HOME/.cargo/bin:$PATH"

_stage_name=
_stage_start=0
stage() {
	_stage_name=$*
	_stage_start=$(date +%s)
	echo ">>> $_stage_name ..." >&2
}
done_stage() {
	echo ">>> $_stage_name: done in $(( $(date +%s) - _stage_start ))s" >&2
}
die() {
	echo "error: $*" >&2
	exit 1
}

# A line of the kernel's console starts with printk's timestamp,
# "[   12.345678] ". KMSG_TS matches that timestamp (an ERE, and the same
# regex in Perl; scripts/kmsg.py is Python's copy); "^$KMSG_TS" is a
# console line, an unanchored match a console message that the console
# wrote into the middle of a line of the guest's output.
KMSG_TS='\[ *[0-9]+\.[0-9]+\] '

# Standard input without the kernel's console lines. Succeeds also when
# nothing is left.
drop_kmsg() {
	grep -aEv "^$KMSG_TS" || [ $? = 1 ]
}

# Prints the lines of the console log LOG strictly between the first line
# that matches the ERE BEGIN and the next line that matches the ERE END, or
# to the end of LOG without END; nothing if no line matches BEGIN. Later
# lines that match BEGIN start nothing. The guest marks its output with
# lines "=== NAME": pass '^=== NAME$', or leave the ^ off where a console
# message may precede the marker on its line. The kernel's console lines
# in the section are kept: drop_kmsg removes them.
console_section() { # LOG BEGIN [END]
	LC_ALL=C B=$2 E=${3:-} awk '
		in_section && ENVIRON["E"] != "" && $0 ~ ENVIRON["E"] { in_section = 0; done = 1 }
		in_section { print }
		!in_section && !done && $0 ~ ENVIRON["B"] { in_section = 1 }
	' "$1"
}

# The kernel releases the project is built for, the release rows of
# scripts/variants.tsv: 6.12 (Debian 12's linux-source-6.12, the variants
# without a suffix) and 7.3 (Debian's trixie-backports linux-source-7.3, the
# variants named `*-7.3`). RKPE_KVER picks one for the scripts that take no
# variant (series.sh, tree.sh, apply.sh); the first release when unset.
kver() {
	local k=${RKPE_KVER:-$(releases | head -1)}
	releases | grep -qxF -- "$k" || die "RKPE_KVER=$k: the project builds for $(releases | tr '\n' ' ')(scripts/variants.tsv)"
	echo "$k"
}

# Debian's pristine kernel source of release KVER (default: kver), unpacked
# once into the cache; prints its path.
pristine_dir() {
	local k=${1:-$(kver)} pkgver dir
	if [ "$k" = 7.3 ]; then
		bash "$ROOT/scripts/linux-7.3.sh"
		return
	fi
	pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
	dir=$CACHE/pristine-$pkgver
	if [ ! -e "$dir/.done" ]; then
		stage "unpack linux-source-6.12 $pkgver"
		rm -rf "$dir" && mkdir -p "$dir"
		tar -C "$dir" --strip-components=1 -xf /usr/src/linux-source-6.12.tar.xz
		touch "$dir/.done"
		done_stage
	fi
	echo "$dir"
}

# The series list of release KVER (default: kver): patches/series for 6.12,
# patches/7.3/series for 7.3.
series_list() {
	case "${1:-$(kver)}" in
	7.3) echo "$ROOT/patches/7.3/series" ;;
	*) echo "$ROOT/patches/series" ;;
	esac
}

# The file of a patch the series list of KVER names: the release's own
# (patches/7.3/NAME) if it has one, else the shared one (patches/NAME).
series_patch() { # NAME [KVER]
	local k=${2:-$(kver)}
	if [ "$k" != 6.12 ] && [ -f "$ROOT/patches/$k/$1" ]; then
		echo "$ROOT/patches/$k/$1"
	else
		echo "$ROOT/patches/$1"
	fi
}

# The LLVM a kernel tree is built with (make's LLVM= argument): Debian 12's
# default LLVM (14) for 6.12; LLVM 19 (clang-19, lld-19) for 7.3, which needs
# LLVM 17 at least (its scripts/min-tool-version.sh).
tree_llvm() { # TREE
	if grep -q '^VERSION = 7$' "$1/Makefile"; then echo -19; else echo 1; fi
}
# The libclang bindgen loads for a tree (its own LLVM's).
tree_libclang() { # TREE
	if [ "$(tree_llvm "$1")" = -19 ]; then echo /usr/lib/llvm-19/lib; else echo /usr/lib/llvm-14/lib; fi
}

# Takes the build cache's lock (one kernel build or cache user at a time)
# for the rest of the calling script.
lock_build_cache() {
	exec 9>"$CACHE/lock"
	flock 9
}

# The patches of a series directory (scripts/series.sh), in order, without
# its cover letter.
series_patches() { # DIR
	local p
	for p in "$1"/*.patch; do
		[ "${p##*/}" = 0000-cover-letter.patch ] || echo "$p"
	done
}

# The files PATCH... edit (their `+++ b/` lines), one a line.
patched_files() {
	sed -n 's|^+++ b/\([^[:space:]]*\).*|\1|p' "$@"
}

# Copies from SRC to DST the files named on standard input that SRC has (a
# file a patch creates is not there yet), keeping their paths.
copy_existing() { # SRC DST
	local f
	sort -u | while read -r f; do
		[ -e "$1/$f" ] || continue
		mkdir -p "$2/$(dirname "$f")" && cp "$1/$f" "$2/$f"
	done
}

# Configures OUT for TREE from `make tinyconfig` plus the fragments FRAG...
# and fails, naming each, when a fragment line does not stick (merge_config
# only warns): `CONFIG_X=n` must be unset, any other line present as
# written. A symbol listed in SKIP (space-separated names) is not checked:
# one the tree does not define yet (scripts/series-build.sh, before the
# module's patch).
configure_kernel() { # TREE OUT SKIP FRAG...
	local tree=$1 out=$2 skip=" $3 " line sym bad=0
	shift 3
	local llvm
	llvm=$(tree_llvm "$tree")
	make -s -C "$tree" O="$out" LLVM="$llvm" tinyconfig || return 1
	KCONFIG_CONFIG="$out/.config" "$tree/scripts/kconfig/merge_config.sh" \
		-m -O "$out" "$out/.config" "$@" || return 1
	make -s -C "$tree" O="$out" LLVM="$llvm" olddefconfig || return 1
	while IFS= read -r line; do
		case "$line" in CONFIG_*) ;; *) continue ;; esac
		sym=${line%%=*}
		case "$skip" in *" $sym "*) continue ;; esac
		case "$line" in
		CONFIG_*=n)
			if grep "^$sym=" "$out/.config" >/dev/null; then echo "config: $sym is set" >&2; bad=1; fi ;;
		*)
			grep -x "$line" "$out/.config" >/dev/null || { echo "config: $line did not stick" >&2; bad=1; } ;;
		esac
	done < <(cat "$@")
	return $bad
}

# The variants, their architectures and releases: scripts/variants.tsv
# (its header says what each column means). Every lookup dies on a name
# the table does not have: a misspelt variant fails where it is named,
# instead of being taken for something else.
VARIANTS_TSV=$ROOT/scripts/variants.tsv

# The row of TYPE (arch, release, variant) whose key (its second field) is
# KEY, its fields separated by single spaces.
table_row() { # TYPE KEY
	local row
	row=$(awk -v t="$1" -v k="$2" '$1 == t && $2 == k { $1 = $1; print; exit }' "$VARIANTS_TSV")
	[ -n "$row" ] || die "scripts/variants.tsv has no $1 $2"
	echo "$row"
}
# Whether the table has that row (without dying).
table_has() { # TYPE KEY
	awk -v t="$1" -v k="$2" '$1 == t && $2 == k { f = 1; exit } END { exit !f }' "$VARIANTS_TSV"
}
# Field N of that row (1 is the type, 2 the key); `-` and a field the row
# leaves out are empty.
table_field() { # TYPE KEY N
	local row
	row=$(table_row "$1" "$2") || exit 1
	awk -v n="$3" '{ v = $n; if (v == "-") v = ""; print v }' <<< "$row"
}
# The variants whose columns have the values asked (arch, release, kind,
# base), in table order; all of them without a condition.
variants() { # [COLUMN=VALUE...]
	local c conds=()
	for c; do
		case "${c%%=*}" in
		arch) conds+=("3=${c#*=}") ;;
		release) conds+=("4=${c#*=}") ;;
		kind) conds+=("5=${c#*=}") ;;
		base) conds+=("6=${c#*=}") ;;
		*) die "variants: no column ${c%%=*} (arch, release, kind, base)" ;;
		esac
	done
	awk -v conds="${conds[*]}" '
		$1 == "variant" {
			n = split(conds, cs, " "); ok = 1
			for (i = 1; i <= n; i++) { split(cs[i], p, "="); if ($(p[1]) != p[2]) ok = 0 }
			if (ok) print $2
		}' "$VARIANTS_TSV"
}
# The arch and release rows' keys, in table order.
arches() { awk '$1 == "arch" { print $2 }' "$VARIANTS_TSV"; }
releases() { awk '$1 == "release" { print $2 }' "$VARIANTS_TSV"; }

# variant_kind: test, ref, debug, pristine or overlay; variant_arch: the
# kernel's ARCH (x86, arm64); variant_kver: the release; variant_base: an
# overlay's base variant.
variant_kind() { table_field variant "$1" 5; }
variant_arch() { table_field variant "$1" 3; }
variant_kver() { table_field variant "$1" 4; }
variant_base() { table_field variant "$1" 6; }
variant_pristine() {
	local k
	k=$(variant_kind "$1") || exit 1
	[ "$k" = pristine ]
}
# The kind whose kconfig/KIND.config a variant is built with: a pristine
# kernel has the ref configuration (C's kprobe events).
variant_config() {
	local k
	k=$(variant_kind "$1") || exit 1
	case "$k" in pristine) echo ref ;; *) echo "$k" ;; esac
}
# Whether a variant runs the module as its kprobe_events provider (`test`,
# and `debug`, which is `test` with the kernel's debug machinery).
module_variant() {
	local k
	k=$(variant_kind "$1") || exit 1
	case "$k" in test | debug) return 0 ;; *) return 1 ;; esac
}
# The variant of KIND on VARIANT's architecture and release: the test
# kernel beside a ref one (hostile.sh), the one whose expectations a debug
# kernel shares (ftracetest.sh), the ref kernel a pristine one is measured
# against (bench-core.sh).
variant_partner() { # VARIANT KIND
	local a r p
	a=$(variant_arch "$1") && r=$(variant_kver "$1") || exit 1
	p=$(variants arch="$a" release="$r" kind="$2" | head -1)
	[ -n "$p" ] || die "scripts/variants.tsv has no $2 variant on $a $r (for $1)"
	echo "$p"
}
# What the files of RELEASE end with: nothing for 6.12, -7.3.
release_suffix() { table_field release "$1" 3; }
# What a variant's files (expectations, results) end with: its
# architecture unless it is the first arch row, then its release's suffix
# (test, ref: nothing; arm64-ref: -arm64; ref-7.3: -7.3).
variant_suffix() {
	local a r
	a=$(variant_arch "$1") && r=$(variant_kver "$1") || exit 1
	[ "$a" = "$(arches | head -1)" ] || printf '%s' "-$a"
	release_suffix "$r"
}
# Whether VARIANT's kernel, as built, has BTF (the x86-64 kernels here;
# kconfig/arm64.config asks for none): what its BTF rows, specs and tests
# depend on, not its architecture.
variant_btf() { grep -qx 'CONFIG_DEBUG_INFO_BTF=y' "$ROOT/build/$1/out/.config" 2>/dev/null; }
# Whether the architecture of VARIANT offers CAP (its arch row's caps).
arch_can() { # VARIANT CAP
	local a caps
	a=$(variant_arch "$1") && caps=$(table_field arch "$a" 8) || exit 1
	case ",$caps," in *",$2,"*) return 0 ;; *) return 1 ;; esac
}
# The stages rows' (LANE VARIANT TOKEN...) of lane LANE, or of every lane,
# as "LANE VARIANT TOKEN..." lines in table order.
stage_rows() { # [LANE]
	awk -v l="${1:-}" '$1 == "stages" && (l == "" || $2 == l) { $1 = ""; sub(/^ /, ""); print }' "$VARIANTS_TSV"
}
# Whether the stages rows give VARIANT the token TOKEN (without its
# :ARGUMENT).
variant_has_token() { # VARIANT TOKEN
	stage_rows | awk -v v="$1" -v t="$2" '$2 == v { for (i = 3; i <= NF; i++) { sub(/:.*/, "", $i); if ($i == t) f = 1 } } END { exit !f }'
}
# The variants that make check runs TOKEN on, in table order.
stage_variants() { # TOKEN
	local v
	for v in $(variants); do
		variant_has_token "$v" "$1" && echo "$v"
	done
}

# Sets tree, out, arch and llvm for a built variant, and exports the
# LIBCLANG_PATH bindgen loads for it: what a script needs to run make on
# the variant's build (clippy.sh, foreign-check.sh, rustdoc.sh).
variant_build_env() { # VARIANT
	tree=$(variant_tree "$1") || exit 1
	out=$CACHE/out-$1
	arch=$(variant_arch "$1")
	llvm=$(tree_llvm "$tree")
	export LIBCLANG_PATH
	LIBCLANG_PATH=$(tree_libclang "$tree")
}
# The kernel tree a built variant was built from (build/tree for 6.12,
# build/tree-7.3 for 7.3: links kernel.sh makes; a pristine variant's is
# Debian's source).
variant_tree() {
	local r
	r=$(variant_kver "$1") || exit 1
	variant_pristine "$1" && { pristine_dir "$r"; return; }
	readlink -f "$ROOT/build/tree$(release_suffix "$r")"
}

# The kernel image of a built variant (a link under build/VARIANT/).
kernel_image() {
	local a
	a=$(variant_arch "$1") || exit 1
	echo "$ROOT/build/$1/$(table_field arch "$a" 3)"
}

# Where the static guest programs of ARCH (x86, arm64) are built (/rkpe/bin/
# in its initramfs).
guest_bin_dir() { # ARCH
	local d
	d=$(table_field arch "$1" 7) || exit 1
	echo "$ROOT/$d"
}

# The C compiler of static guest programs for ARCH (x86, arm64): the host's
# gcc, or clang and lld with Debian's arm64 cross libc. Prints the command.
guest_cc() { # ARCH
	table_row arch "$1" > /dev/null || exit 1
	awk -v a="$1" '$1 == "arch" && $2 == a { for (i = 9; i <= NF; i++) printf "%s%s", $i, (i < NF ? " " : "\n"); exit }' "$VARIANTS_TSV"
}

# apt-get with a private configuration under DIR/apt (its own sources,
# lists and cache), so that packages of another suite or architecture are
# fetched without touching the host's apt state. private_apt_init writes
# the sources line and reads the lists; both pass OPTIONS (such as another
# architecture) on to apt-get.
private_apt() { # DIR [OPTIONS...] COMMAND...
	local dir=$1
	shift
	apt-get -o Dir::Etc::SourceList="$dir/apt/sources.list" -o Dir::Etc::SourceParts=/dev/null \
		-o Dir::State::Lists="$dir/apt/lists" -o Dir::Cache="$dir/apt/cache" \
		-o APT::Sandbox::User=root "$@"
}
private_apt_init() { # DIR SOURCES_LINE [OPTIONS...]
	local dir=$1 line=$2
	shift 2
	mkdir -p "$dir/apt/lists/partial" "$dir/apt/cache/archives/partial"
	echo "$line" > "$dir/apt/sources.list"
	private_apt "$dir" "$@" update -qq
}

# Debian packages fetched once into the cache and unpacked there, never
# installed (scripts/qemu-fixed.sh, busybox-arm64.sh, linux-7.3.sh): under
# the lock $CACHE/NAME.lock, so one lane or clone fetches and the others
# wait; only when DIR/.done is not KEY. The packages come through a
# private apt configuration (private_apt_init's SOURCES_LINE and apt
# OPTIONS), each PACKAGE=VERSION that has left the archive as PACKAGE from
# the line's suite; then UNPACK DIR DEB... unpacks and checks them, and
# DIR/version lists the .deb files. The apt state and the .deb files go.
cached_debs() { # NAME DIR KEY STAGE UNPACK SOURCES_LINE [OPTION...] -- PACKAGE...
	# (Its locals are prefixed: UNPACK runs in their scope.)
	local _cd_name=$1 _cd_dir=$2 _cd_key=$3 _cd_stage=$4 _cd_unpack=$5 _cd_line=$6 _cd_suite _cd_p
	shift 6
	local _cd_opts=()
	while [ "$1" != -- ]; do _cd_opts+=("$1"); shift; done
	shift
	_cd_suite=$(echo "$_cd_line" | sed 's/.*\] *[^ ]* *\([^ ]*\).*/\1/')
	mkdir -p "$CACHE"
	exec 8>"$CACHE/$_cd_name.lock"
	flock 8
	if [ "$(cat "$_cd_dir/.done" 2>/dev/null)" != "$_cd_key" ]; then
		stage "$_cd_stage"
		rm -rf "$_cd_dir" && mkdir -p "$_cd_dir/debs"
		private_apt_init "$_cd_dir" "$_cd_line" "${_cd_opts[@]}"
		for _cd_p in "$@"; do
			(cd "$_cd_dir/debs" && { private_apt "$_cd_dir" "${_cd_opts[@]}" download -qq "$_cd_p" ||
				{ [ "$_cd_p" != "${_cd_p%%=*}" ] &&
					private_apt "$_cd_dir" "${_cd_opts[@]}" download -qq "${_cd_p%%=*}/$_cd_suite"; }; })
		done
		"$_cd_unpack" "$_cd_dir" "$_cd_dir"/debs/*.deb
		(cd "$_cd_dir/debs" && ls) > "$_cd_dir/version"
		rm -rf "$_cd_dir/apt" "$_cd_dir/debs"
		echo "$_cd_key" > "$_cd_dir/.done"
		done_stage
	fi
	exec 8>&-
}

# A C run that scripts/vm.sh --c-only cached is replayed later only if the
# script that ran it passed: a script names its logs here, and when it exits
# with a failure the cached runs behind them are forgotten (the next run
# boots C again).
c_run_logs=()
c_runs_judged() {
	c_run_logs+=("$@")
	trap '_c_rc=$?; if [ $_c_rc != 0 ]; then for _l in "${c_run_logs[@]}"; do [ -f "$_l.c-run" ] && rm -f "$(cat "$_l.c-run")"; done; fi; exit $_c_rc' EXIT
}
