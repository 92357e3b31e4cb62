"""Architecture profile data (TOML), installed as the ``csum.arch_profiles`` package."""
