#!/usr/bin/env bash
# Carries the long runs of scripts/paper_lanes.sh from one machine to the next. A machine
# keeps nothing but the repository, so a run cut when its time ends would start again from
# nothing on the next machine; `save` packs each unfinished or still-needed run of
# runs/results into carry/ (committed), `restore` unpacks those that are missing here,
# and `ant train --resume` (scripts/paper_lanes.sh) goes on from their last epoch.
#
#     bash scripts/carry.sh save      # before a machine's time ends, lanes paused or stopped
#     bash scripts/carry.sh restore   # on a new machine (paper_lanes.sh does it first)
#
# One archive per run directory, byte-for-byte the same while its files are (sorted
# names, no times or owners), so that git stores a finished run once. Saving pauses the
# lanes' processes (SIGSTOP) while it reads, so an archive is what a kill at that moment
# would have left, which `--resume` is made to continue from.
set -euo pipefail
cd "$(dirname "$0")/.."
root=runs/results carry=carry

# The run directories still needed: the ensemble's members (finished ones are kept until
# the ensemble is scored) and any row whose training has not finished.
units() {
    local d
    for d in "$root"/mnist-a-ensemble8/member-*; do [ -d "$d" ] && echo "$d"; done
    for d in "$root"/*/; do
        d=${d%/}
        [ "$(basename "$d")" = mnist-a-ensemble8 ] && continue
        [ -d "$d/checkpoint" ] && echo "$d"
    done
    return 0
}

# The archive's name for a run directory under runs/results: its path, / as +.
archive_of() { echo "$carry/$(echo "${1#"$root"/}" | tr / +).tar.gz"; }

pack() { # run directory
    local out tmp
    out=$(archive_of "$1") tmp="$(archive_of "$1").tmp"
    tar --sort=name --mtime=@0 --owner=0 --group=0 --numeric-owner \
        --exclude=run.lock -C "$root" -cf - "${1#"$root"/}" | gzip -n >"$tmp"
    mv "$tmp" "$out"
    echo "saved $1 ($(du -h "$out" | cut -f1))"
}

# Archives whose run has since finished (and is no ensemble member) are dropped; an
# archive whose run is not here means this machine was never restored: saving then would
# lose it, so nothing is saved.
drop_finished() {
    local a name dir needed
    # Listed once, then searched: `units | grep -q` under pipefail failed whenever grep
    # stopped reading early (SIGPIPE), which dropped still-needed archives from git.
    needed=$(units)
    for a in "$carry"/*.tar.gz; do
        [ -e "$a" ] || continue
        name=$(basename "$a" .tar.gz)
        [ "$name" = mnist-a-ensemble8.files ] && continue
        dir="$root/$(echo "$name" | tr + /)"
        if [ ! -d "$dir" ]; then
            echo "$a: $dir is not here; run \`bash $0 restore\` first" >&2
            exit 2
        fi
        if ! grep -qxF "$dir" <<<"$needed"; then
            git rm -q --cached --ignore-unmatch "$a"
            rm -f "$a"
            echo "dropped $a ($dir finished)"
        fi
    done
}

paused=""
save() {
    local d
    mkdir -p "$carry"
    paused=$(pgrep -f "$root/ant-lanes" || true)
    # Resumed however this ends (an error, Ctrl-C).
    trap '[ -z "$paused" ] || kill -CONT $paused' EXIT
    [ -z "$paused" ] || kill -STOP $paused
    drop_finished
    for d in $(units); do pack "$d"; done
    # The ensemble's own files, beside its members.
    if [ -d "$root/mnist-a-ensemble8" ]; then
        find "$root/mnist-a-ensemble8" -maxdepth 1 -type f ! -name run.lock -printf '%P\n' \
            | sort | tar --mtime=@0 --owner=0 --group=0 --numeric-owner \
                -C "$root/mnist-a-ensemble8" -cf - -T - | gzip -n >"$carry/mnist-a-ensemble8.files.tar.gz"
    fi
    cp "$root"/lane-*.log "$carry"/ 2>/dev/null || true
}

restore() {
    local a name log
    mkdir -p "$root"
    for log in "$carry"/lane-*.log; do
        [ -e "$log" ] && [ ! -e "$root/$(basename "$log")" ] && cp "$log" "$root/"
    done
    for a in "$carry"/*.tar.gz; do
        [ -e "$a" ] || continue
        name=$(basename "$a" .tar.gz)
        case "$name" in
            mnist-a-ensemble8.files)
                mkdir -p "$root/mnist-a-ensemble8"
                tar -xzf "$a" -C "$root/mnist-a-ensemble8" --skip-old-files ;;
            *)
                if [ -e "$root/$(echo "$name" | tr + /)" ]; then
                    echo "kept $root/$(echo "$name" | tr + /) (already here)"
                else
                    tar -xzf "$a" -C "$root"
                    echo "restored $root/$(echo "$name" | tr + /)"
                fi ;;
        esac
    done
}

case "${1:-}" in
    save) save ;;
    restore) restore ;;
    *) echo "usage: $0 save|restore" >&2; exit 2 ;;
esac
