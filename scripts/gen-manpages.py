#!/usr/bin/env python3
"""gen-manpages.py ARGUS ARGUSD OUTDIR - the man pages and the bash
completion of Argus, written from what the built binaries print for
--help, so that neither can drift from the commands' own usage text
(cli/argus.c's command list, each command's option table and usage,
analysis/parse_opts.h; collector/argusd.c's usage):

  OUTDIR/man1/argus.1           the command list (argus --help)
  OUTDIR/man1/argus-COMMAND.1   one page a command (argus COMMAND --help),
                                git's scheme: `man argus-diagnose`
  OUTDIR/man8/argusd.8          the collector daemon (argusd --help)
  OUTDIR/completions/argus      bash completion: the commands, then each
                                command's options

Run at build time (CMake target argus-manpages); tests/e2e/manpages.sh
checks every command and option has its page entry and its completion.
"""
import os
import re
import subprocess
import sys

OPT = re.compile(r"(?<![\w-])(--[a-z][a-z0-9-]*)")


def help_of(argv):
    p = subprocess.run(argv, stdout=subprocess.PIPE, stderr=subprocess.STDOUT,
                       text=True, env=dict(os.environ, LC_ALL="C"))
    return p.stdout


def commands(top_help):
    """(name, summary) of each line under "commands:" in `argus --help`."""
    out, on = [], False
    for line in top_help.splitlines():
        if line.strip() == "commands:":
            on = True
            continue
        if on:
            m = re.match(r"^  (\S+)\s+(.*)$", line)
            if not m:
                if out:
                    break
                continue
            out.append((m.group(1), m.group(2).strip()))
    return out


def roff(text):
    """Text for a roff .nf block: backslashes and leading dots escaped."""
    lines = []
    for line in text.rstrip("\n").splitlines():
        line = line.replace("\\", "\\e")
        if line.startswith((".", "'")):
            line = "\\&" + line
        lines.append(line)
    return "\n".join(lines)


def split_usage(text, prog):
    """The usage lines (those of `prog ...` and their indented
    continuations) and the rest of the help text."""
    usage, rest, in_usage = [], [], True
    for line in text.rstrip("\n").splitlines():
        l = line[len("usage: "):] if line.startswith("usage: ") else line
        if in_usage and (l.startswith(prog) or (usage and l.startswith(" ") and
                                                  l.strip().startswith("["))):
            usage.append(l)
            continue
        in_usage = False
        rest.append(line)
    return "\n".join(usage), "\n".join(rest)


def page(name, section, summary, synopsis, body, see):
    head = [
        f'.TH {name.upper()} {section} "" "Argus" "Argus Manual"',
        ".SH NAME",
        f"{name} \\- {summary.replace(chr(92), chr(92) + 'e')}",
        ".SH SYNOPSIS",
        ".nf",
        roff(synopsis) if synopsis else name,
        ".fi",
    ]
    if body.strip():
        head += [".SH DESCRIPTION", ".nf", roff(body), ".fi"]
    head += [".SH SEE ALSO", ", ".join(f"\\fB{s}\\fR" for s in see)]
    return "\n".join(head) + "\n"


def main():
    if len(sys.argv) != 4:
        sys.exit("usage: gen-manpages.py ARGUS ARGUSD OUTDIR")
    argus, argusd, out = sys.argv[1:]
    top = help_of([argus, "--help"])
    cmds = commands(top)
    if not cmds:
        sys.exit(f"gen-manpages.py: `{argus} --help` lists no commands")
    for d in ("man1", "man8", "completions"):
        os.makedirs(os.path.join(out, d), exist_ok=True)

    opts = {}
    for name, summary in cmds:
        text = help_of([argus, name, "--help"])
        synopsis, body = split_usage(text, "argus " + name)
        if not synopsis:
            sys.exit(f"gen-manpages.py: `argus {name} --help` shows no usage line")
        opts[name] = sorted(set(OPT.findall(text)) | {"--help"})
        with open(os.path.join(out, "man1", f"argus-{name}.1"), "w") as f:
            f.write(page(f"argus-{name}", 1, summary, synopsis, body,
                         ["argus(1)", "argusd(8)"]))

    intro = top.split("commands:")[0]
    _, intro_body = split_usage(intro, "argus")
    listing = "\n".join(f"argus-{n}(1)  {s}" for n, s in cmds)
    with open(os.path.join(out, "man1", "argus.1"), "w") as f:
        f.write(page("argus", 1, "system-wide causal tracing for performance hangs",
                     "argus COMMAND [ARGS...]\nargus COMMAND --help",
                     intro_body.strip() + "\n\nCommands:\n" + listing,
                     ["argusd(8)"] + [f"argus-{n}(1)" for n, _ in cmds]))

    dtext = help_of([argusd, "--help"])
    dsyn, dbody = split_usage(dtext, "argusd")
    with open(os.path.join(out, "man8", "argusd.8"), "w") as f:
        f.write(page("argusd", 8, "the Argus collector daemon (started by argus start or "
                     "argus.service)", dsyn or "argusd [OPTIONS]", dbody, ["argus(1)",
                     "argus-start(1)"]))

    names = " ".join(n for n, _ in cmds)
    cases = "\n".join(f'\t{n}) opts="{" ".join(o)}" ;;' for n, o in opts.items())
    with open(os.path.join(out, "completions", "argus"), "w") as f:
        f.write(f"""# bash completion for argus, written by scripts/gen-manpages.py from
# `argus --help` and each command's --help: do not edit.
_argus()
{{
	local cur=${{COMP_WORDS[COMP_CWORD]}} cmd=${{COMP_WORDS[1]}} opts
	if [ "$COMP_CWORD" -eq 1 ]; then
		COMPREPLY=($(compgen -W "{names} --help" -- "$cur"))
		return
	fi
	case $cmd in
{cases}
	*) opts="--help" ;;
	esac
	if [[ $cur == -* ]]; then
		COMPREPLY=($(compgen -W "$opts" -- "$cur"))
	else
		COMPREPLY=($(compgen -f -- "$cur"))
	fi
}}
complete -F _argus argus
""")


if __name__ == "__main__":
    main()
