public enum EngineModule {}
