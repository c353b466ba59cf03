"""``python -m robodyn``: the command line (:mod:`robodyn.cli`)."""

from robodyn.cli import main

if __name__ == "__main__":
    main()
