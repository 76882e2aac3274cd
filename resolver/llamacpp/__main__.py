"""`python -m resolver.llamacpp`: the command is resolver/cli/llamacpp.py (started by name, so
this package does not import the command layer)."""
import runpy

if __name__ == "__main__":
    runpy.run_module("resolver.cli.llamacpp", run_name="__main__", alter_sys=True)
