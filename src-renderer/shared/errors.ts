/** An error as the console and the dashboard show it: our snake_case code and a sentence for a person. */
export interface ConsoleError {
  code: string;
  message: string;
  status?: number;
}
