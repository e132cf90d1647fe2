"""One write's transaction on the timeline and what coordinates writers on storage: the table lock, heartbeats,
and S3's conditional writes (Hudi's ``org.apache.hudi.client.transaction``). It drives the table services and the
write client only through the ``transaction.Writer`` protocol they implement."""
