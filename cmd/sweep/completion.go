package main

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"regexp"
	"sort"
	"strings"
)

// cmdCompletion prints a shell completion script for sweep's commands and
// their options, read from each command's own -h so that it cannot drift.
func cmdCompletion(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := newFlags("completion", "bash|zsh|fish   (then: source <(sweep completion bash); fish: sweep completion fish > ~/.config/fish/completions/sweep.fish)", stderr)
	pos, err := parseArgs(fs, args)
	if err != nil {
		return err
	}
	if len(pos) != 1 {
		return usagef("completion: want one shell: bash, zsh or fish")
	}
	cmds := map[string][]string{}
	var names []string
	for _, c := range commands() {
		names = append(names, c.name)
		if c.name == "completion" {
			continue
		}
		cmds[c.name] = commandFlags(ctx, c)
	}
	switch pos[0] {
	case "bash", "zsh":
		var b strings.Builder
		fmt.Fprintf(&b, "# sweep completion for %s: source <(sweep completion %s)\n", pos[0], pos[0])
		if pos[0] == "zsh" {
			b.WriteString("autoload -U +X bashcompinit && bashcompinit\n")
		}
		b.WriteString("_sweep() {\n  local cur=${COMP_WORDS[COMP_CWORD]}\n  if [ \"$COMP_CWORD\" -eq 1 ]; then\n")
		fmt.Fprintf(&b, "    COMPREPLY=($(compgen -W %q -- \"$cur\")); return\n  fi\n  case ${COMP_WORDS[1]} in\n", strings.Join(names, " "))
		for _, n := range names {
			if fl := cmds[n]; len(fl) > 0 {
				fmt.Fprintf(&b, "    %s) COMPREPLY=($(compgen -W %q -- \"$cur\"));;\n", n, "--"+strings.Join(fl, " --"))
			}
		}
		b.WriteString("    completion) COMPREPLY=($(compgen -W \"bash zsh fish\" -- \"$cur\"));;\n  esac\n}\ncomplete -o default -F _sweep sweep\n")
		_, err := io.WriteString(stdout, b.String())
		return err
	case "fish":
		var b strings.Builder
		b.WriteString("# sweep completion for fish: sweep completion fish > ~/.config/fish/completions/sweep.fish\n")
		for _, c := range commands() {
			fmt.Fprintf(&b, "complete -c sweep -n __fish_use_subcommand -f -a %s -d %q\n", c.name, c.summary)
			for _, f := range cmds[c.name] {
				fmt.Fprintf(&b, "complete -c sweep -n '__fish_seen_subcommand_from %s' -l %s\n", c.name, f)
			}
		}
		_, err := io.WriteString(stdout, b.String())
		return err
	}
	return usagef("completion: %q: want bash, zsh or fish", pos[0])
}

var flagLine = regexp.MustCompile(`(?m)^  -([a-z][a-z0-9-]*)`)

// commandFlags lists a command's options as its -h prints them.
func commandFlags(ctx context.Context, c command) []string {
	var b bytes.Buffer
	_ = c.run(ctx, []string{"-h"}, io.Discard, &b)
	var out []string
	for _, m := range flagLine.FindAllStringSubmatch(b.String(), -1) {
		out = append(out, m[1])
	}
	sort.Strings(out)
	return out
}
