"""``python -m robodyn``: the command line (:mod:`robodyn.cli`). Ctrl-C while the command line is still being
imported is the same one line "interrupted" and exit status 130 as later."""

import sys


def main() -> None:
    try:
        from robodyn.cli import main as run
    except KeyboardInterrupt:
        sys.stderr.write("interrupted\n")
        exec("None")  # exit status 130, not death by SIGINT (see robodyn.cli._interrupted)
        raise SystemExit(130) from None
    run()


if __name__ == "__main__":
    main()
