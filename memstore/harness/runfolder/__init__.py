"""The run folder: what a run is (`recipe`: the `Recipe` of its options and the one builder of its
`RunConfig`), the folder the commands open (`folder`: `RunFolder`), its ``manifest.json`` and
the folder rules (`manifest`), each finished unit (`shards`), the tables and ``results.json``
(`results`), all in a versioned format (`memstore.harness.records.FORMAT`) read back through
`memstore.harness.records.upgrade`.

The one library the CLI, the pytest plugin and `memstore.harness.evaluate` use for run folders:
resume (``--resume``), parts run on several machines and assembled (``memstore merge``), the
rule that a folder which is not a run folder is never overwritten, one process at a time in a
folder (`lock`), and files written whole or not at all (`whole`).
"""
