"""The reference writer and readers built on ``spec``.

Importing the package registers the S3 client for conditional writes (``reference.transaction.object_store``).
"""

from reference.transaction import object_store as object_store
