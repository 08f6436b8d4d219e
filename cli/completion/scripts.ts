// scripts: the completion script of each shell. Each one hands the words typed so far to
// `cosictl __complete` (the same executable the user typed) and reads back its protocol:
// candidate lines "value<TAB>about", then ":files" (let the shell complete a file name) or
// ":done". Everything it knows lives in cosictl, so the scripts stay this small.

const BASH = `# bash completion for cosictl: source <(cosictl completion bash)
_cosictl() {
  local cur words cword line
  if declare -F _get_comp_words_by_ref >/dev/null; then
    _get_comp_words_by_ref -n =: cur words cword  # keep host:port and k=v in one word
  else
    cur=\${COMP_WORDS[COMP_CWORD]}; words=("\${COMP_WORDS[@]}"); cword=$COMP_CWORD
  fi
  local -a lines
  mapfile -t lines < <("\${words[0]}" __complete "\${words[@]:1:cword-1}" "$cur" 2>/dev/null)
  COMPREPLY=()
  (( \${#lines[@]} )) || return 0
  if [[ \${lines[-1]} == :files ]]; then
    compopt -o default 2>/dev/null
    return 0
  fi
  local q
  # quoted as the shell reads it back: an id may hold ; $ or a space
  for line in "\${lines[@]:0:\${#lines[@]}-1}"; do printf -v q %q "\${line%%$'\\t'*}"; COMPREPLY+=("$q"); done
  # jsonpath= wants its template right after the =
  if [[ \${#COMPREPLY[@]} -eq 1 && \${COMPREPLY[0]} == *= ]]; then compopt -o nospace 2>/dev/null; fi
  if declare -F __ltrim_colon_completions >/dev/null; then __ltrim_colon_completions "$cur"; fi
  return 0
}
complete -F _cosictl cosictl
`;

const ZSH = `#compdef cosictl
# zsh completion for cosictl: source <(cosictl completion zsh) after compinit, or save it as
# _cosictl in a directory of $fpath
_cosictl() {
  local -a lines described
  local line
  lines=("\${(@f)$("\${words[1]}" __complete "\${(@)words[2,CURRENT-1]}" "\${words[CURRENT]}" 2>/dev/null)}")
  (( \${#lines} )) || return 1
  if [[ \${lines[-1]} == :files ]]; then _files; return; fi
  for line in "\${(@)lines[1,-2]}"; do
    [[ -n $line ]] && described+=("\${\${line%%$'\\t'*}//:/\\\\:}:\${line#*$'\\t'}")
  done
  (( \${#described} )) || return 1
  _describe -t cosictl cosictl described
}
if [[ \${funcstack[1]} == _cosictl ]]; then _cosictl "$@"; else compdef _cosictl cosictl; fi
`;

const FISH = `# fish completion for cosictl: cosictl completion fish > ~/.config/fish/completions/cosictl.fish
function __cosictl_complete
    set -l tokens (commandline -opc)
    set -l cur (commandline -ct)
    set -l lines ($tokens[1] __complete $tokens[2..-1] "$cur" 2>/dev/null)
    test (count $lines) -gt 0; or return
    if test "$lines[-1]" = ":files"
        __fish_complete_path "$cur"
        return
    end
    set -e lines[-1]
    printf '%s\\n' $lines
end
complete -c cosictl -f -a '(__cosictl_complete)'
`;

export const COMPLETION_SCRIPTS: Readonly<Record<string, string>> = { bash: BASH, zsh: ZSH, fish: FISH };
