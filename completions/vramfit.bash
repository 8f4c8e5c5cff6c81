# bash completion for vramfit - the words come from vramfit itself (`vramfit help
# --complete`): commands, each command's flags (from its help and the option table), the
# catalog's models and cards, the engines.
# SPDX-License-Identifier: Apache-2.0
_vramfit() {
    local cur prev cmd words
    cur=${COMP_WORDS[COMP_CWORD]}
    prev=${COMP_WORDS[COMP_CWORD - 1]}
    cmd=${COMP_WORDS[1]}
    if [ "$COMP_CWORD" -eq 1 ]; then
        words=$(vramfit help --complete commands 2>/dev/null)
    else
        case $prev in
        --gpu | --card) words=$(vramfit help --complete gpus 2>/dev/null) ;;
        --engine) words=$(vramfit help --complete engines 2>/dev/null) ;;
        --model | -m) words=$(vramfit help --complete models 2>/dev/null) ;;
        --data-dir | --listen | -d | -n) return 0 ;;
        *)
            case $cur in
            -*) words=$(vramfit help --complete flags "$cmd" 2>/dev/null) ;;
            *)
                case $cmd in
                estimate | pick | inspect) words=$(vramfit help --complete models 2>/dev/null) ;;
                catalog) words="models gpus" ;;
                help) words="$(vramfit help --complete commands 2>/dev/null) engines" ;;
                *) return 0 ;;
                esac
                ;;
            esac
            ;;
        esac
    fi
    local IFS=$'\n'
    # shellcheck disable=SC2207 # one word per line
    COMPREPLY=($(compgen -W "$words" -- "$cur"))
}
complete -o default -F _vramfit vramfit
