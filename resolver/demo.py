"""`python -m resolver.demo`: quick-start command 1 (README.md); the command is resolver/cli/demo.py.

Standard library only until the bootstrap has re-executed inside the project's virtualenv.
"""
if __name__ == "__main__":
    from resolver.cli.demo import run

    run()
