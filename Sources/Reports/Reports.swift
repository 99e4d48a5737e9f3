public enum ReportsModule {}
