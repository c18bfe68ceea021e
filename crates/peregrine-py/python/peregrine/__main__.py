"""``python -m peregrine``: run or replay a strategy file.

    python -m peregrine run my_strategy.py --name py [--engine main] [--mode batched]
    python -m peregrine replay my_strategy.py --config-json '{"format": "itch", ...}'

``peregrine replay ... --python my_strategy.py`` calls the second form; ``peregrine
up --python my_strategy.py`` the first.
"""

import argparse
import sys

import peregrine


def _replay(argv):
    p = argparse.ArgumentParser(prog="python -m peregrine replay")
    p.add_argument("strategy", help="path.py or path.py:Class")
    p.add_argument("--config-json", required=True, help="a replay config (peregrine replay's)")
    p.add_argument("--json", help="write the report here")
    p.add_argument("--plots", help="write the SVG plots into this directory")
    a = p.parse_args(argv)
    strategy = peregrine.load_strategy(a.strategy)
    report = peregrine.replay_config(strategy, a.config_json, json=a.json, plots=a.plots)
    print(report.text, end="")
    if a.json:
        print(f"report: {a.json}")
    if a.plots:
        for name in ("equity.svg", "inventory.svg", "fills.svg"):
            print(f"plot: {a.plots}/{name}")
    return 0


def _run(argv):
    p = argparse.ArgumentParser(prog="python -m peregrine run")
    p.add_argument("strategy", help="path.py or path.py:Class")
    a, rest = p.parse_known_args(argv)
    peregrine.main(peregrine.load_strategy(a.strategy), rest)
    return 0


def main(argv=None):
    argv = sys.argv[1:] if argv is None else argv
    if not argv or argv[0] not in ("run", "replay"):
        print(__doc__, file=sys.stderr)
        return 2
    return (_run if argv[0] == "run" else _replay)(argv[1:])


if __name__ == "__main__":
    sys.exit(main())
