public enum FaultFSModule {}
