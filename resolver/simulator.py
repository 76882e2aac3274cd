"""`python -m resolver.simulator`: the simulated model server (docs/simulator.md); the command is resolver/cli/simulator.py."""
if __name__ == "__main__":
    from resolver.cli import run_main
    from resolver.cli.simulator import main

    run_main(main)
