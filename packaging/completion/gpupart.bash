# bash completion for gpupart(1): subcommands, their verbs and options, built-in snapshots, profile names,
# and the command after `run ... --`. Written by hand from app/cli; gpupart.1 documents the same commands.

_gpupart_profiles() {
    local dir
    for dir in "${XDG_CONFIG_HOME:-$HOME/.config}/gpupart/profiles" /etc/gpupart/profiles; do
        [ -d "$dir" ] && find "$dir" -maxdepth 1 -name '*.json' -printf '%f\n' 2> /dev/null | sed 's/\.json$//'
    done
}

_gpupart() {
    local cur prev words cword
    _init_completion || return

    local commands="topology gpus engines copy-engines probe mask export run set list smlp mps check history undo
                    profile demo top source exporter measure plan k8s gpcs slurm"
    local snapshot="--snapshot --gpu"
    local csv="--format --fields"
    local command="" verb="" i
    for ((i = 1; i < cword; i++)); do
        if [ "${words[i]}" = "--" ] && [ "$command" = "run" ]; then
            # Everything after `run ... --` is the program and its arguments.
            _command_offset $((i + 1))
            return
        fi
        case ${words[i]} in
            -*) ;;
            *) if [ -z "$command" ]; then command=${words[i]}; elif [ -z "$verb" ]; then verb=${words[i]}; fi ;;
        esac
    done

    case $prev in
        --format) COMPREPLY=($(compgen -W "csv csv,noheader" -- "$cur")); return ;;
        --fail-on) COMPREPLY=($(compgen -W "warning error" -- "$cur")); return ;;
        --fields) return ;;  # `gpupart COMMAND --help` lists them
        -s | --sort)  # gpupart top: the table's columns
            if [ "$command" = "top" ]; then
                COMPREPLY=($(compgen -W "PID USER TPCS SMS SHARE LAUNCH/s LAUNCHES MEM CPU% RSS SHIM REQUESTED APPLIED COMMAND" -- "$cur"))
                return
            fi ;;
        --snapshot)
            COMPREPLY=($(compgen -W "builtin:h200 builtin:gtx1060 builtin:rtx6000ada" -- "$cur"))
            _filedir json
            return ;;
        --json | --png | --svg)
            [ "$command" = "export" ] && { _filedir; return; } ;;
        --scaling) COMPREPLY=($(compgen -W "linear compute memory" -- "${cur##*,}")); return ;;
        --output-profile) _filedir json; return ;;
        --steps | --dwell | --floor | --target) return ;;
        --gpu | --tpcs | --workers | --seconds | --deadline | -d | --delay | -n | --frames | --size | --nvdebug-root | --mmio-image)
            [ "$prev" = "--nvdebug-root" ] && _filedir -d
            [ "$prev" = "--mmio-image" ] && _filedir
            return ;;
    esac

    local options=""
    case $command in
        "") COMPREPLY=($(compgen -W "$commands --help --version" -- "$cur")); return ;;
        topology) options="$snapshot --sources --json --all-gpus" ;;
        gpus) options="--snapshot --json $csv" ;;
        engines | copy-engines) options="$snapshot --json" ;;
        probe) options="--gpu --json --deadline" ;;
        mask) [ -z "$verb" ] && { COMPREPLY=($(compgen -W "parse" -- "$cur")); return; }; options="$snapshot --json" ;;
        export) options="$snapshot --json --png --svg --processes" ;;
        run) options="$snapshot --tpcs --only --spread --dry-run --" ;;
        set)
            if [ -z "$verb" ] && [[ $cur != -* ]]; then _pids; return; fi
            options="$snapshot --spread --dry-run --json" ;;
        list) options="--gpu --json $csv --keep-exited --snapshot" ;;
        smlp) options="--json" ;;
        mps) [ -z "$verb" ] && { COMPREPLY=($(compgen -W "start stop status" -- "$cur")); return; }; options="--json" ;;
        check) options="$snapshot --json $csv --fail-on" ;;
        history) options="--json" ;;
        undo) options="$snapshot --dry-run --json" ;;
        profile)
            if [ -z "$verb" ]; then
                COMPREPLY=($(compgen -W "list show save apply diff delete disarm" -- "$cur"))
                return
            fi
            case $verb in
                show | apply | diff | delete) [[ $cur != -* ]] && { COMPREPLY=($(compgen -W "$(_gpupart_profiles)" -- "$cur")); return; } ;;
            esac
            options="$snapshot --dry-run --force --json" ;;
        demo)
            [ -z "$verb" ] && { COMPREPLY=($(compgen -W "start stop" -- "$cur")); return; }
            [ "$verb" = "start" ] && options="--workers --seconds --scaling --app-masks" ;;
        measure)
            if [ -z "$verb" ] && [[ $cur != -* ]]; then _pids; return; fi
            options="$snapshot --steps --dwell --floor --save --no-save --json" ;;
        plan) options="$snapshot --target --apply --output-profile --json" ;;
        k8s)
            [ -z "$verb" ] && { COMPREPLY=($(compgen -W "prepare unprepare claims resource-slice" -- "$cur")); return; }
            case $verb in
                prepare) options="$snapshot --claim --namespace --name --tpcs --gpcs --state-dir --registry-root --cdi-dir
                                  --mps-root --mps-shm-root --no-mps --device-node --json" ;;
                unprepare) options="--claim --state-dir --registry-root --cdi-dir --json" ;;
                claims) options="--state-dir --json" ;;
                resource-slice) options="--snapshot --node --generation --json" ;;
            esac ;;
        gpcs) options="$snapshot --write --json" ;;
        slurm)
            [ -z "$verb" ] && { COMPREPLY=($(compgen -W "conf jobs place release" -- "$cur")); return; }
            case $verb in
                conf) options="--snapshot --node --plugin" ;;
                jobs) options="--json" ;;
                place) options="--snapshot --step --uid --holder --gres --no-mps" ;;
                release) options="--holder --wait" ;;
            esac ;;
        top) options="$snapshot -d --delay -C --no-colour -s --sort -b --batch -n --frames --size" ;;
        exporter) options="--snapshot --listen --textfile --interval --once" ;;
        source)
            [ -z "$verb" ] && [[ $cur != -* ]] && { COMPREPLY=($(compgen -W "nvml mps udev nvdebug mmio" -- "$cur")); return; }
            options="--json --gpu --nvdebug-root --mmio-image" ;;
    esac
    COMPREPLY=($(compgen -W "$options --help" -- "$cur"))
}
complete -F _gpupart gpupart
