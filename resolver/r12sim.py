"""`python -m resolver.r12sim`: the simulated r12 study (docs/simulator.md); the command is resolver/cli/r12sim.py."""
if __name__ == "__main__":
    from resolver.cli.r12sim import run

    run()
