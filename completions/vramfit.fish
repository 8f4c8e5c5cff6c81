# fish completion for vramfit - the words come from vramfit itself (`vramfit help --complete`).
# SPDX-License-Identifier: Apache-2.0
function __vramfit_cmd
    set -l t (commandline -opc)
    test (count $t) -ge 2; and echo $t[2]
end
complete -c vramfit -f -n __fish_use_subcommand -a '(vramfit help --complete commands 2>/dev/null)'
complete -c vramfit -f -n 'not __fish_use_subcommand; and string match -qr -- "^-" (commandline -ct)' \
    -a '(vramfit help --complete flags (__vramfit_cmd) 2>/dev/null)'
complete -c vramfit -f -n '__fish_seen_subcommand_from estimate pick inspect; and not string match -qr -- "^-" (commandline -ct)' \
    -a '(vramfit help --complete models 2>/dev/null)'
complete -c vramfit -f -n '__fish_seen_subcommand_from catalog' -a 'models gpus'
complete -c vramfit -x -l gpu -a '(vramfit help --complete gpus 2>/dev/null)'
complete -c vramfit -x -l engine -a '(vramfit help --complete engines 2>/dev/null)'
