"""A write's configuration: the user's ``hoodie.*`` options read against the settings registry
(``spec.config.registry``) into one write config (Hudi's ``HoodieWriteConfig``)."""
