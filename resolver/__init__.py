"""ReasonScape: procedural reasoning evaluations, from generated problems to ranked models.

Importing the package is cheap on purpose: entry scripts and the bootstrap helpers
import submodules only when they need them.
"""
__version__ = "0.1.0"

