"""``python -m memstore``: the command line, as the ``memstore`` script (imported under the main
guard, so that the processes ``multiprocessing`` spawns from it do not load the command line)."""

if __name__ == "__main__":
    from memstore.cli import main

    main()
