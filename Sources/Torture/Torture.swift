public enum TortureModule {}
