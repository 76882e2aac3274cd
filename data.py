#!/usr/bin/env python3
"""data.py: publish and fetch evaluation data as content-addressed blobs (docs/data.md).

    python data.py pull dataset data/r12.json          # just the PointsDB
    python data.py pull dataset data/r12.json --full   # plus every cohort's raw run folders
    python data.py pull cohort data/r12/GLM-4.5        # one cohort's run folders
    python data.py pull eval 1f0030                    # one eval's run folders
    python data.py push cohort data/r12/NewModel-7B    # pack, upload, record in data/manifest.json
    python data.py status [eval|cohort|dataset TARGET] # local vs remote vs manifest
    python data.py prune                               # drop cached blobs the manifest no longer names
    python data.py remote [URL]                        # show or set the manifest's remote
"""
from resolver.cli import run_main
from resolver.cli.data import main

if __name__ == "__main__":
    run_main(main)
