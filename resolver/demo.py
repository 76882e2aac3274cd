"""`python -m resolver.demo`: quick-start command 1 (README.md); the command is resolver/cli/demo.py,
run as `__main__` as every `python -m` command is (resolver/llamacpp/__main__.py too).

Standard library only until the bootstrap has re-executed inside the project's virtualenv.
"""
import runpy

if __name__ == "__main__":
    runpy.run_module("resolver.cli.demo", run_name="__main__", alter_sys=True)
